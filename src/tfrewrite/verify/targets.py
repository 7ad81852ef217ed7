"""Which functions to verify, and how.

A *pair* is a file before and after a rewrite. Every function whose source
text differs is a candidate. A function verification can call — loss-shaped
`(y_true, y_pred[, sample_weight])`, or with inputs configured — is verified
itself; a changed helper that cannot be called on synthesised inputs is
verified through the callable functions that use it, or on the arguments
the code that calls it builds (`main()`, a test; see `callers`), as is a
training loop inside a function with parameters. In the `verify PATH`
mode, traced functions the rewrite leaves alone are still checked for
divergence in the original (traced against eager).

Standard library plus the shared `ast` index; no TensorFlow.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from dataclasses import dataclass

from tfrewrite.verify import callers, loops, signatures, stand_ins
from tfrewrite.verify.inputs import Spec
from tfrewrite.verify.module_slice import (
    find_definition,
    function_sources,
    is_main_guard,
    references,
)
from tfrewrite.verify.project_imports import LoadError
from tfrewrite.verify.settings import VerifySettings
from tfrewrite.workspace.line_names import CellStarts, line_name, named_line


@dataclass
class Target:
    path: str  # as shown to the user
    qualname: str
    line: int
    original_source: str
    rewrite_source: str | None  # None: check the original alone for divergence
    module: str
    reason: str
    specs: dict[str, Spec] | None = None  # configured inputs
    problem: str | None = None  # why it cannot be verified (then it is "not proven")
    covers: tuple[str, ...] = ()  # the changed functions this target vouches for
    harness: str | None = None  # "module:build" for a train step
    # A training loop to replay: {"original": [scope, index], "rewrite": [...], "step": name}
    loop: dict | None = None
    factory: str | None = None  # "module:function" that builds `self` for a method
    # Code that builds the arguments verify cannot make (see `callers`), as JSON.
    caller: dict | None = None
    # A notebook's cells in the original's and the rewrite's Python views:
    # how its results name their lines (`workspace.line_names`).
    cell_starts: CellStarts = ()
    rewrite_cell_starts: CellStarts = ()
    # The fixes whose code this target runs ("TFR101 line 12"): the result's
    # verdict is theirs (`verify PATH` only; `--original` and `--base` see no
    # fixes). Last: the fields above are also given by position.
    fixes: tuple[str, ...] = ()
    # Why the rewrite still needs AutoGraph ("line 185: a Python `if` on a
    # tensor that was not rewritten (TFR101)"): then it is not run with
    # `autograph=False`, which only a rewrite that removed every such
    # statement claims to survive.
    needs_autograph: str | None = None
    # A train step nothing in the project runs, with no harness configured:
    # the worker runs it through harnesses with stand-ins (`stand_ins`), and
    # says this, what to write, when none fits.
    stand_in_hint: str | None = None


@functools.lru_cache(maxsize=4)
def syntax_tree(source: str) -> ast.Module:
    """The syntax tree of `source`, parsed once for the many questions
    pairing asks of the original and the rewrite (read-only: never mutate it)."""
    return ast.parse(source)


def changed_functions(original: str, rewrite: str) -> list[str]:
    """Qualified names of functions present in both whose source differs."""
    before, after = function_sources(original), function_sources(rewrite)
    return [name for name in before if name in after and before[name] != after[name]]


def added_functions(original: str, rewrite: str) -> list[str]:
    """Qualified names of functions the rewrite added (an extracted train step)."""
    before = function_sources(original)
    return [name for name in function_sources(rewrite) if name not in before]


def outside_changes(original: str, rewrite: str) -> list[tuple[int, str]]:
    """Top-level statements (not definitions, not loops) the rewrite removed
    or changed: (line in the original, its first line of text)."""

    def statements(source: str) -> list[ast.stmt]:
        out = []
        for stmt in syntax_tree(source).body:
            body = stmt.body if is_main_guard(stmt) else [stmt]  # type: ignore[attr-defined]
            out += [
                s
                for s in body
                if not isinstance(
                    s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While)
                )
                and not (isinstance(s, (ast.Import, ast.ImportFrom)))
            ]
        return out

    after = [ast.dump(s) for s in statements(rewrite)]
    # Removing `tf.config.run_functions_eagerly(True)` (TFR307) turns graphs
    # back on: what it changes is each traced function, which `verify PATH`
    # checks traced against eager.
    after += [ast.dump(s) for s in statements(original) if switches_graphs_off(s)]
    changed = []
    for stmt in statements(original):
        text = ast.dump(stmt)
        if text in after:
            after.remove(text)
        else:
            changed.append((stmt.lineno, ast.unparse(stmt).splitlines()[0][:80]))
    return changed


def switches_graphs_off(stmt: ast.stmt) -> bool:
    """`tf.config.run_functions_eagerly(True)`: a statement whose removal
    (TFR307) changes every traced function, and is checked through them."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and "run_functions_eagerly" in ast.unparse(stmt.value.func)
    )


def _calls_in_loop(source: str, scope: str, index: int, name: str) -> bool:
    return any(
        s.scope == scope and s.index == index
        for s in loops.loop_sites(source, loops.calls_name(name.rpartition(".")[2]))
    )


def _harness_hint(module: str, name: str) -> str:
    return (
        'write verify_harness.py with `def build(): return {"model": ..., "optimizer": ..., '
        '"batches": [(x, y), ...]}` (a few batches, the last one short) and set '
        f'[tool.tfrewrite.verify] harness."{module}:{name}" = "verify_harness:build", '
        f'or give its parameters in inputs."{module}:{name}"'
    )


def _no_inputs(module: str, source: str, name: str) -> str:
    """Exactly what is missing to call `name`, and the configuration that supplies it."""
    try:
        tree = syntax_tree(source)
        node = find_definition(tree, name)
    except (LoadError, SyntaxError):
        return f"no inputs for `{name}`; " + _harness_hint(module, name)
    usages = signatures.analyse(tree, node, "." in name)
    params = ", ".join(usages)
    if trains(node):
        return (
            f"`{name}({params})` is a train step and no training loop verify can replay "
            "calls it; " + _harness_hint(module, name)
        )
    blocked = signatures.blockers(usages)
    if blocked:
        return (
            f"`{name}({params})` cannot be called on synthesised tensors: "
            + "; ".join(blocked)
            + ", and no loss-shaped function or training loop in this file calls it; write "
            "verify_harness.py with `def build(): return {"
            + ", ".join(f'"{p}": ...' for p in usages)
            + '}` and set [tool.tfrewrite.verify] harness."'
            + f'{module}:{name}" = "verify_harness:build"'
        )
    return (
        f"`{name}({params})` takes keyword-only or no parameters verify can synthesise; give "
        f'them in [tool.tfrewrite.verify] inputs."{module}:{name}"'
    )


def synthesisable(source: str, qualname: str) -> bool:
    """Every required parameter looks like a tensor (the signature search can
    try to make it), there is at least one, none is keyword-only, and the
    function is not a train step."""
    try:
        tree = syntax_tree(source)
        node = find_definition(tree, qualname)
    except (LoadError, SyntaxError):
        return False
    usages = signatures.analyse(tree, node, "." in qualname)
    required_kw = sum(1 for d in node.args.kw_defaults if d is None)
    return bool(usages) and not required_kw and not signatures.blockers(usages) and not trains(node)


def _nested_functions(source: str, qualname: str) -> list[str]:
    """Names of functions defined inside `qualname` (a train step built per call)."""
    try:
        node = find_definition(syntax_tree(source), qualname)
    except (LoadError, SyntaxError):
        return []
    return [
        n.name
        for n in ast.walk(node)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not node
    ]


def _definition_line(source: str, qualname: str) -> int:
    try:
        return find_definition(syntax_tree(source), qualname).lineno
    except (LoadError, SyntaxError):
        return 1


def loss_shaped(source: str, qualname: str) -> bool:
    """Two required positional parameters (after `self`) and nothing else required."""
    try:
        tree = syntax_tree(source)
        node = find_definition(tree, qualname)
    except (LoadError, SyntaxError):
        return False
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if (
        "." in qualname
        and positional
        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    ):
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    required_kw = sum(1 for d in args.kw_defaults if d is None)
    if required != 2 or required_kw or trains(node):
        return False
    # `predict(model, x)` has the shape of a loss, but a model is no tensor.
    return not signatures.blockers(signatures.analyse(tree, node, "." in qualname))


def _needs_its_object(source: str, scope: str) -> bool:
    """`scope` is a method of a module-level class whose `__init__` takes
    arguments without defaults (`PPO_Agent(num_actions)`)."""
    class_name, dot, _ = scope.partition(".")
    if not dot:
        return False
    try:
        init = find_definition(syntax_tree(source), f"{class_name}.__init__")
    except (LoadError, SyntaxError):
        return False
    if not isinstance(init, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = init.args
    positional = [*args.posonlyargs, *args.args][1:]
    required = len(positional) - len(args.defaults)
    return required > 0 or any(d is None for d in args.kw_defaults)


def _stands_in(source: str, name: str) -> bool:
    """A train step verify can run through harnesses it writes (`stand_ins`)."""
    try:
        node = find_definition(syntax_tree(source), name)
    except (LoadError, SyntaxError):
        return False
    return trains(node) and bool(stand_ins.for_step(source, name)[0])


def trains(node: ast.AST) -> bool:
    """A train step: it opens a tape or applies gradients (`step(x, y)` is
    not a loss, whatever its signature)."""
    return any(loops.opens_tape(n) or loops.applies_gradients(n) for n in ast.walk(node))


def _caller_of_helper(path: str, source: str, name: str) -> callers.Caller | None:
    """The code that builds the arguments of a changed function that is no
    train step (a train step is proven through the loop that calls it)."""
    try:
        node = find_definition(syntax_tree(source), name)
    except (LoadError, SyntaxError):
        return None
    return None if trains(node) else callers.find_caller(path, source, name)


def _callers(source: str, helper: str) -> list[str]:
    """Functions that call `helper`: through the names they need, for a
    module-level function; for a method, functions whose own code calls it
    as an attribute (`self.per_loss(...)`, `agent.per_loss(...)`), not every
    method whose class is the helper's."""
    if "." not in helper:
        return sorted(
            q for q, names in references(source).items() if helper in names and q != helper
        )
    owner, method = helper.rsplit(".", 1)
    found = []
    if method in ("call", "__call__"):  # called through the object: `MyLoss()(y, p)`
        top = owner.split(".")[0]
        found += [
            q
            for q, names in references(source).items()
            if top in names and not q.startswith(top + ".")
        ]
    for qualname, text in function_sources(source).items():
        try:
            tree = ast.parse(textwrap.dedent(text))
        except SyntaxError:
            continue
        if qualname != helper and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == method
            for n in ast.walk(tree)
        ):
            found.append(qualname)
    return sorted(set(found))


def pair_targets(
    path: str,
    module: str,
    original: str,
    rewrite: str,
    settings: VerifySettings,
    traced: dict[str, str] | None = None,
    cells: tuple[CellStarts, CellStarts] = ((), ()),
) -> list[Target]:
    """Targets for one file and its rewrite. `traced` (qualname -> reason)
    adds original-only divergence checks for traced functions left unchanged.
    `cells`: a notebook's cells in the original's and the rewrite's views."""
    targets: dict[str, Target] = {}

    def callable_here(qualname: str, search: bool = False) -> bool:
        """Verify can call it: configured, loss-shaped, or (for a function
        the rewrite changed, `search`) every parameter can be synthesised."""
        return (
            settings.inputs_for(module, qualname) is not None
            or settings.harness_for(module, qualname) is not None
            or loss_shaped(original, qualname)
            or (search and synthesisable(original, qualname))
        )

    def add(
        qualname: str,
        rewrite_source: str | None,
        reason: str,
        problem: str | None = None,
        covers: str = "",
    ) -> None:
        if qualname in targets and (
            targets[qualname].rewrite_source is not None or rewrite_source is None
        ):
            if covers and covers not in targets[qualname].covers:
                targets[qualname].covers += (covers,)
            return
        targets[qualname] = Target(
            path,
            qualname,
            _definition_line(original, qualname),
            original,
            rewrite_source,
            module,
            reason,
            settings.inputs_for(module, qualname),
            problem,
            (covers,) if covers else (),
            settings.harness_for(module, qualname),
            factory=settings.harness_for(module, qualname.rpartition(".")[0])
            if "." in qualname
            else None,
        )

    def with_caller_fallback(name: str) -> None:
        """If the inputs verify makes do not fit (`agent.update(x, y)` on a
        model of 3 features), the project's own call gives real ones: a
        caller in the file (also one that reaches a method through another
        method of its class: `agent.train(x, y)` calling `self.update`), a
        test, or a script that imports the module."""
        target = targets.get(name)
        if target is None or target.caller is not None or target.harness is not None:
            return
        if settings.inputs_for(module, name) is not None:
            return
        try:
            node = find_definition(syntax_tree(original), name)
        except (LoadError, SyntaxError):
            return
        caller = None if trains(node) else callers.find_caller(path, original, name)
        if caller is not None:
            target.caller = {**caller.to_json(), "fallback": True}

    replayed: set[tuple[str, int]] = set()

    def add_loop(
        site: loops.LoopSite, rewrite_site: loops.LoopSite, step: str | None, covers: list[str]
    ) -> None:
        key = (site.scope, site.index)
        label = f"loop at {named_line(site.line, cells[0])}" + (
            f" in `{site.scope}`" if site.scope not in ("", loops.MAIN) else ""
        )
        if key in replayed:
            targets[label].covers += tuple(c for c in covers if c not in targets[label].covers)
            return
        replayed.add(key)
        key = site.scope or "<module>"
        harness = settings.harness_for(module, key)
        setting = f'[tool.tfrewrite.verify] harness."{module}:{key}" = "verify_harness:build"'
        hint = (
            "write verify_harness.py with `def build(): return {...}` giving, by name, what "
            "the loop reads that the script cannot build here (its dataset: a few batches, "
            f"the last one short; its model, its optimizer) and set {setting}"
        )
        problem = None
        caller = None
        if site.params:
            hint = (
                "write verify_harness.py with `def build(): return {"
                + ", ".join(f'"{p}": ...' for p in site.params)
                + f"}}` (the arguments of `{site.scope}` as the project builds them, its data "
                "a few batches with a short last one) and set "
                f"{setting}"
            )
        if (site.params or _needs_its_object(original, site.scope)) and harness is None:
            # A loop in a method of a class `__init__`'s defaults cannot
            # build: the object the project's own code builds, if any.
            caller = callers.find_caller(path, original, site.scope)
        if site.params and harness is None and caller is None:
            problem = (
                f"the training loop at {line_name(site.line)} (`{site.header}`) is in "
                f"`{site.scope}({', '.join(site.params)})`, whose parameters verify cannot "
                "make, and no `main()`, `__main__` block, top-level code or test of the "
                f"project calls `{site.scope}`; {hint}"
            )
        targets[label] = Target(
            path,
            label,
            site.line,
            original,
            rewrite,
            module,
            f"replays `{site.header}`"
            + (f", which calls `{step}`" if step else "")
            + (f", with the arguments {caller.describe()} builds" if caller else ""),
            None,
            problem,
            tuple(covers),
            harness,
            {
                "original": [site.scope, site.index],
                "rewrite": [rewrite_site.scope, rewrite_site.index],
                "step": step,
                "hint": hint,
            },
            caller=caller.to_json() if caller else None,
        )

    def sites_pair(
        scope: str, index: int, step: str | None = None
    ) -> tuple[loops.LoopSite, loops.LoopSite] | None:
        before = loops.site_at(original, scope, index, step)
        after = loops.site_at(rewrite, scope, index, step)
        return (before, after) if before is not None and after is not None else None

    changed = changed_functions(original, rewrite)
    added = added_functions(original, rewrite)
    loop_changes = loops.changed_loops(original, rewrite)
    for scope, index in loop_changes:
        covers = [n for n in added if _calls_in_loop(rewrite, scope, index, n)]
        step = covers[0].rpartition(".")[2] if covers else None
        pair = sites_pair(scope, index, step)
        if pair is None:
            continue
        if scope in changed and not covers and not pair[0].trains:
            continue  # a loop of a changed function that trains nothing: the function's target
        if scope in changed:
            covers.append(scope)
        add_loop(*pair, step, covers or [pair[0].scope or "<module>"])
    for name in added:
        if not any(name in t.covers for t in targets.values()):
            add(
                name,
                rewrite,
                "added by the rewrite",
                problem=f"`{name}` is new and no training loop verify can replay calls it; "
                + _harness_hint(module, name),
                covers=name,
            )
    for name in changed:
        if any(name in t.covers for t in targets.values()):
            continue
        step = name.rpartition(".")[2]
        sites = loops.loop_sites(original, loops.calls_name(step))
        # A step defined inside the function and called by its own loop
        # (`def train(...): @tf.function def step(...)...; for ...: step(...)`):
        # the loop is replayed, also when a harness gives the function's arguments.
        inner = [
            (site, nested)
            for nested in _nested_functions(rewrite, name)
            for site in loops.loop_sites(original, loops.calls_name(nested))
            if site.scope == name and not sites
        ]
        for site, nested in inner:
            pair = sites_pair(site.scope, site.index, nested)
            if pair is not None:
                add_loop(*pair, nested, [name])
        if inner:
            continue
        if callable_here(name):
            add(name, rewrite, "changed by the rewrite", covers=name)
            with_caller_fallback(name)
            pair = sites_pair(sites[0].scope, sites[0].index, step) if sites else None
            if pair is not None and not pair[0].params and name in targets:
                # If synthesised inputs do not fit, the loop that calls it proves it.
                targets[name].loop = {
                    "original": [pair[0].scope, pair[0].index],
                    "rewrite": [pair[1].scope, pair[1].index],
                    "step": step,
                    "fallback": True,
                }
            continue
        if not sites and "." in name:
            # A method the script calls through another method of its class
            # (`agent.train(x, y)` calls `self.update(x, y)`): the loop that
            # calls that one replays it.
            for through in callers.through_methods(syntax_tree(original), *name.rsplit(".", 1)):
                sites = loops.loop_sites(original, loops.calls_name(through))
                if sites:
                    step = through
                    break
        for site in sites:
            pair = sites_pair(site.scope, site.index, step)
            if pair is not None:
                add_loop(*pair, step, [name])
        if sites:
            continue
        # Callers that verify calls anyway prove the helper in its real
        # context; else the helper itself on searched inputs; else callers
        # on searched inputs.
        users = [c for c in _callers(rewrite, name) if callable_here(c)]
        if not users and synthesisable(original, name):
            add(name, rewrite, "changed by the rewrite", covers=name)
            with_caller_fallback(name)
            continue
        users = users or [c for c in _callers(rewrite, name) if callable_here(c, search=True)]
        for user in users:
            add(user, rewrite, f"calls `{name}`, which the rewrite changed", covers=name)
        if not users:
            caller = _caller_of_helper(path, original, name)
            if caller is not None:
                add(
                    name,
                    rewrite,
                    f"changed by the rewrite; its arguments are built by {caller.describe()}",
                    covers=name,
                )
                # Said when the caller does not give the arguments after all.
                targets[name].caller = {
                    **caller.to_json(),
                    "hint": _no_inputs(module, original, name),
                }
                continue
            hint = _no_inputs(module, original, name)
            if _stands_in(original, name):
                add(name, rewrite, "changed by the rewrite", covers=name)
                targets[name].stand_in_hint = hint
                continue
            add(name, rewrite, "changed by the rewrite", problem=hint, covers=name)
    for line, text in outside_changes(original, rewrite):
        add(
            f"<module {named_line(line, cells[0])}>",
            rewrite,
            "changed outside any function",
            problem=f"`{text}` changed outside any function or training loop: verify runs "
            "functions and loops, not single statements; review this change (it is not "
            "applied by fix --verify)",
            covers=f"<module {named_line(line, cells[0])}>",
        )
    for name, reason in (traced or {}).items():
        if name not in targets and callable_here(name):
            add(name, None, reason)
    for target in targets.values():
        target.cell_starts, target.rewrite_cell_starts = cells
    return sorted(targets.values(), key=lambda t: (t.path, t.line))
