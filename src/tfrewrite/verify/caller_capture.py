"""Capture the arguments a caller builds for a function, inside a verification worker.

A function verify cannot call alone (`train(epoch, model, optimizer)`) is
called by the project somewhere with real arguments (see `callers`, which
finds that caller). Verify runs that caller's code up to the call, with the
function replaced by a capture stub: the first call raises `Captured` with
the arguments bound to the function's signature, which stops the caller
there (a loop over epochs that calls `train` stops at its first call;
training the caller does before the call is cut off after a time limit).
A method (`agent.train(env)` after `agent = Agent(...)`) is stubbed on its
class, so its object is captured as `self` with the other arguments.

Both sides build their arguments under the same seeds, each from its own
module (the original's caller for the original, the rewrite's caller for the
rewrite), so they are equal; then the usual comparison runs. A test file
imports the module from disk, so both sides would get objects of the
classes on disk: when the rewrite changed one of those classes, verify
refuses rather than compare the rewrite against itself.

Standard library only: it runs inside verification workers, which may live
in another virtual environment.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from tfrewrite.verify import loader, project_imports, remedies
from tfrewrite.verify.appended import append_function
from tfrewrite.verify.callers import Caller, same_file_caller, script_caller
from tfrewrite.verify.inputs import DTYPES, TensorSpec
from tfrewrite.verify.module_slice import (
    bound_names,
    find_definition,
    function_sources,
    is_main_guard,
    no_arguments,
    own_scope_nodes,
)

CALLER = "__tfrewrite_caller__"
SECONDS = 30.0  # building the arguments may take this long (model building, a first epoch)


def caller_source(source: str, caller: Caller) -> tuple[str, list[str]]:
    """For a `__main__` block or top-level caller: `source` with a function
    appended that runs that code up to the statement holding the call; and
    the names that code binds (module globals the function may read)."""
    tree = ast.parse(source)
    body: list[ast.stmt] = []
    if caller.kind == "main":
        for stmt in tree.body:
            if is_main_guard(stmt):
                body = list(stmt.body)  # type: ignore[attr-defined]
                if any(s.lineno <= caller.line <= (s.end_lineno or s.lineno) for s in body):
                    break
    else:
        # What the loader's slice does not run: bare statements, loops, blocks.
        body = [
            s
            for s in tree.body
            if (bound_names(s) is None and not is_main_guard(s))
            or (s.lineno <= caller.line <= (s.end_lineno or s.lineno))
        ]
    kept: list[ast.stmt] = []
    for stmt in body:
        if stmt.lineno > caller.line:
            break
        if caller.kind == "module" and isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = stmt.value
            stmt = ast.copy_location(ast.Expr(value), stmt) if value is not None else stmt
        kept.append(stmt)
    bound = sorted(
        {
            n.id
            for s in kept
            for n in own_scope_nodes(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        | {name for s in kept for name in (bound_names(s) or ()) if name != "*"}
    )
    statements: list[ast.stmt] = [ast.Global(bound)] if bound else []
    statements += kept or [ast.Pass()]
    function = ast.FunctionDef(
        name=CALLER,
        args=no_arguments(),
        body=statements,
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    # At the line of its first statement: every statement keeps its line in the script.
    function.lineno = function.end_lineno = kept[0].lineno if kept else 1
    ast.fix_missing_locations(function)
    return append_function(source, function), bound


def changed_definitions(original: str, rewrite: str | None) -> frozenset[str]:
    """Functions the rewrite changed, and the classes of changed methods."""
    if rewrite is None:
        return frozenset()
    before, after = function_sources(original), function_sources(rewrite)
    changed = {name for name in before if before[name] != after.get(name)}
    return frozenset(changed | {name.rpartition(".")[0] for name in changed if "." in name})


class Captured(BaseException):  # noqa: N818 - not an error: the caller reached the call
    """Raised by the capture stub at the first call: carries the arguments.
    A BaseException, so the caller's own `except Exception:` does not swallow it."""

    def __init__(self, arguments: dict[str, Any]) -> None:
        super().__init__("captured")
        self.arguments = arguments


class CallerProblem(Exception):
    """The caller did not give the arguments; the message says why (the
    function is then not proven)."""


class CallerTimeout(CallerProblem):
    """The caller ran past the time limit before reaching the call."""


class _Expired(BaseException):
    """The time limit, raised inside the caller's code."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `_Expired` in the main thread after `seconds` (and every second
    after, should the code catch it). Without SIGALRM, no limit: the
    worker's own timeout still applies."""
    if (
        seconds <= 0
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    active = [True]

    def expire(signum: int, frame: Any) -> None:
        if active[0]:
            raise _Expired()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        active[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _stub(function: str, target: Any) -> Callable[..., Any]:
    python_function = getattr(target, "python_function", target)
    signature = inspect.signature(python_function)

    def capture(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as err:
            raise CallerProblem(f"the call does not fit `{function}{signature}`: {err}") from err
        raise Captured(dict(bound.arguments))

    return capture


def _same_file(
    caller: Caller, source: str, path: str, package: str | None, role: str
) -> tuple[Callable[[], Any], dict[str, Any], list[str]]:
    """(run the caller, the module it runs in, the globals its code binds)."""
    if caller.kind == "function":
        loaded = loader.load_function(source, caller.name, role, path, package)
        fn = loaded.python_function
        return (lambda: fn([path])) if caller.argv else fn, loaded.module.__dict__, []  # type: ignore[operator]
    # The rewrite may have moved the call (a decorator added above it); a
    # script of the project is not rewritten.
    here = caller if caller.imports_module else same_file_caller(source, caller.function)
    if here is None or here.kind != caller.kind:
        raise CallerProblem(f"{caller.describe()} no longer calls `{caller.function}`")
    text, bound = caller_source(source, here)
    loaded = loader.load_function(text, CALLER, role, path, package)
    return loaded.python_function, loaded.module.__dict__, bound  # type: ignore[return-value]


def _test(caller: Caller, role: str) -> tuple[Callable[[], Any], dict[str, Any]]:
    """(run setUp then the test method, the test module's globals)."""
    method = caller.name.partition(".")[2]
    package, _ = project_imports.package_of(caller.path)
    loaded = loader.load_function(
        caller.source, caller.name, role, caller.path, package, factory=lambda cls: cls(method)
    )
    test = loaded.python_function
    case = test.__self__  # type: ignore[attr-defined]

    def run() -> None:
        if "setUpClass" in vars(type(case)):
            type(case).setUpClass()
        case.setUp()
        try:
            test()  # type: ignore[operator]
        finally:
            with contextlib.suppress(Exception):
                case.tearDown()

    return run, loaded.module.__dict__


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {(text[0] if text else '')[:200]}"


def _parse_flags(path: str) -> None:
    """absl flags read before `app.run` parses them raise: their defaults instead."""
    flags = sys.modules.get("absl.flags")
    if flags is not None and not flags.FLAGS.is_parsed():
        with contextlib.suppress(Exception):
            flags.FLAGS([path])


def _same_file_path(module: Any, path: str) -> bool:
    # Read from the module's dict: a lazy module imports itself on attribute access.
    file = getattr(module, "__dict__", {}).get("__file__")
    return bool(file) and os.path.abspath(file) == os.path.abspath(path)


def capture_arguments(
    caller: Caller,
    source: str,
    path: str,
    package: str | None,
    role: str,
    seconds: float = SECONDS,
    changed: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Run `caller` (from `source`, the module at `path`) up to its call of
    the function; the arguments by parameter name, plus the module globals a
    `__main__` block or top-level caller bound before the call (the function
    may read them). Loading the caller's module and running it share the
    time limit. Raises `CallerProblem` (not proven) or
    `project_imports.MissingPackage`."""
    function = caller.function
    patched: list[tuple[dict[str, Any] | type, str, Any]] = []
    argv = sys.argv
    script = caller.path if caller.imports_module and caller.kind != "test" else path
    sys.argv = [script]
    step = "loading the code of"
    try:
        with time_limit(seconds):
            run, scope, bound, holders = _prepare(caller, source, path, package, role)
            _parse_flags(script)
            if "." in function:  # a method: stubbed on its class, `self` captured too
                class_name, _, method = function.partition(".")
                classes = [h[class_name] for h in holders if isinstance(h.get(class_name), type)]
                target = next((vars(c)[method] for c in classes if method in vars(c)), None)
                holders = classes
            else:
                target = next((h[function] for h in holders if callable(h.get(function))), None)
            if target is None:
                raise CallerProblem(
                    f"{caller.describe()} does not reach `{function}` of {os.path.basename(path)}"
                )
            stub = _stub(function, target)
            for holder in holders:
                items = vars(holder) if isinstance(holder, type) else holder
                for name, value in list(items.items()):
                    if value is target:
                        patched.append((holder, name, value))
                        _assign(holder, name, stub)
            step = f"building the arguments of `{function}` from"
            # A `tf.function` on the way to the call (`agent.train_step(...)`
            # calling `self._loss(...)`) would hand the stub symbolic tensors.
            with _functions_run_eagerly():
                run()
    except Captured as got:
        arguments = got.arguments
    except _Expired:
        raise CallerTimeout(
            f"building the arguments of `{function}` from {caller.describe()} took longer "
            f"than {seconds:g} s (the caller's code before the call trains or loads too much)"
        ) from None
    except (project_imports.MissingPackage, CallerProblem):
        raise
    except (Exception, SystemExit) as err:
        found = project_imports.missing_package(err)
        if found is not None:
            raise found from err
        line = project_imports.user_line(err)
        at = f" at {line}" if line else ""
        remedy = remedies.remedy(err, path)
        fix = f"; {remedy}" if remedy else ""
        raise CallerProblem(
            f"{step} {caller.describe()} raised {_first_line(err)}{at}{fix}"
        ) from err
    else:
        raise CallerProblem(f"{caller.describe()} returned without calling `{function}`")
    finally:
        for holder, name, value in reversed(patched):
            _assign(holder, name, value)
        sys.argv = argv
    _refuse_changed(caller, arguments, path, changed)
    extras = {n: scope[n] for n in bound if n in scope and n not in arguments}
    return {**extras, **arguments}


@contextlib.contextmanager
def _functions_run_eagerly() -> Iterator[None]:
    """Every `tf.function` runs as Python while the caller builds the
    arguments: what reaches the call are values, not a trace's tensors."""
    tensorflow = sys.modules.get("tensorflow")
    config = getattr(tensorflow, "config", None)
    if config is None or not hasattr(config, "run_functions_eagerly"):
        yield
        return
    before = config.functions_run_eagerly()
    config.run_functions_eagerly(True)
    try:
        yield
    finally:
        config.run_functions_eagerly(before)


def _assign(holder: dict[str, Any] | type, name: str, value: Any) -> None:
    """Set a module global, or a class attribute (a method being stubbed)."""
    if isinstance(holder, type):
        setattr(holder, name, value)
    else:
        holder[name] = value


def _prepare(
    caller: Caller, source: str, path: str, package: str | None, role: str
) -> tuple[Callable[[], Any], dict[str, Any], list[str], list[dict[str, Any]]]:
    """Load the caller: (run it, its module's globals, the globals its code
    binds, the namespaces that hold the function to replace)."""
    if not caller.imports_module:
        run, scope, bound = _same_file(caller, source, path, package, f"{role}-caller")
        return run, scope, bound, [scope]
    if caller.kind == "test":
        run, scope = _test(caller, f"{role}-caller")
    else:  # a script of the project: its names are not the module's globals
        script_package, _ = project_imports.package_of(caller.path)
        run, scope, _ = _same_file(
            caller, caller.source, caller.path, script_package, f"{role}-caller"
        )
    # The test or script imports the module from disk: every module object
    # of that file (not those verify loaded from a side's source).
    holders = [
        vars(m)
        for m in list(sys.modules.values())
        if m is not None
        and _same_file_path(m, path)
        and not getattr(m, "__name__", "").startswith(loader.MODULE_PREFIX)
    ]
    return run, scope, [], [*holders, scope]


def _ours(module_name: str, path: str) -> bool:
    """Defined by the module at `path`: loaded from disk, or by verify."""
    return module_name.startswith(loader.MODULE_PREFIX) or _same_file_path(
        sys.modules.get(module_name), path
    )


def _refuse_changed(
    caller: Caller, arguments: dict[str, Any], path: str, changed: frozenset[str]
) -> None:
    """An argument built from a class of this module that the rewrite changed
    (or that is a function it changed) would carry the original to the
    rewrite's side."""
    if not changed:
        return
    for name, value in arguments.items():
        if name == "self" and "." in caller.function:
            continue  # a method's object: each side builds its own (see `for_function`)
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        for item in values:
            function = getattr(item, "python_function", item)
            if (
                inspect.isfunction(function)
                and function.__qualname__ in changed
                and _ours(function.__module__, path)
            ):
                raise CallerProblem(
                    f"the argument `{name}` that {caller.describe()} passes to "
                    f"`{caller.function}` is `{function.__qualname__}` as it was before the "
                    "rewrite, which changed it; the rewrite would be run with the original"
                )
            for klass in type(item).__mro__:
                if klass.__qualname__ in changed and _ours(klass.__module__, path):
                    raise CallerProblem(
                        f"the argument `{name}` that {caller.describe()} passes to "
                        f"`{caller.function}` is a `{type(item).__name__}`, built from the class "
                        f"`{klass.__qualname__}` as it was before the rewrite, which changed it; "
                        "the rewrite would be run on the original class"
                    )


def construct(cls: type, source: str, path: str, package: str | None) -> tuple[Any, str] | None:
    """An object of `cls` as the script's own code builds it (`agent =
    PERAgent(model, target, env)` in `main()`), for a method whose class
    `__init__`'s defaults cannot build: that code runs, under fixed seeds, up
    to the construction, where the class's `__init__` returns the object by
    raising `Captured`. The object is given the class `cls` (the same source,
    loaded as another module). None when no code builds one; when that code
    fails first, `loader.ScriptFailed` says how (or `MissingPackage` which)."""
    name = cls.__name__
    tree = ast.parse(source)
    caller = same_file_caller(source, name, tree=tree)
    if caller is None and os.path.isfile(path) and _same_constructor(path, tree, name):
        # A script builds it from the file on disk: with this `__init__` only.
        caller = script_caller(path, tree, name)
    if caller is None:
        return None
    patched: list[tuple[type, Any]] = []
    argv = sys.argv
    sys.argv = [caller.path or path]
    try:
        with time_limit(SECONDS):
            run, _, _, holders = _prepare(caller, source, path, package, "constructor")
            _parse_flags(caller.path or path)
            built = next((h[name] for h in holders if isinstance(h.get(name), type)), None)
            if built is None:
                return None
            initialise = built.__init__

            def capture(self: Any, *args: Any, **kwargs: Any) -> None:
                initialise(self, *args, **kwargs)
                if type(self) is built:
                    raise Captured({"self": self})

            patched.append((built, built.__dict__.get("__init__")))
            built.__init__ = capture  # type: ignore[misc]
            _seed_everything()
            run()
    except Captured as got:
        instance = got.arguments["self"]
    except _Expired:
        raise loader.ScriptFailed(
            f"{caller.describe()} took longer than {SECONDS:g} s before building `{name}`"
        ) from None
    except (Exception, SystemExit) as err:
        found = project_imports.missing_package(err)
        if found is not None:
            raise found from err
        at = project_imports.user_line(err)
        raise loader.ScriptFailed(
            f"{caller.describe()} raised {_first_line(err)}"
            + (f" at {at}" if at else "")
            + f" before building `{name}`"
        ) from err
    else:
        return None
    finally:
        for klass, original in patched:
            if original is None:
                del klass.__init__
            else:
                klass.__init__ = original  # type: ignore[misc]
        sys.argv = argv
    try:
        _adopt(instance, cls, caller)
    except CallerProblem:
        return None
    return instance, f"`{name}` was built by {caller.describe()}, as the script builds it"


def _same_constructor(path: str, tree: ast.Module, name: str) -> bool:
    """The class `name` has the same `__init__` in `tree` as in the file at
    `path` (what a script that imports it builds it with), compared as
    syntax: `tree` may be of a regenerated slice of the module."""
    try:
        with open(path, encoding="utf-8") as handle:
            on_disk = ast.parse(handle.read())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    return _constructor_syntax(on_disk, name) == _constructor_syntax(tree, name)


def _constructor_syntax(tree: ast.Module, name: str) -> str | None:
    """`name.__init__` as syntax; "inherited" for a class without one."""
    if not any(isinstance(s, ast.ClassDef) and s.name == name for s in tree.body):
        return None
    try:
        return ast.dump(find_definition(tree, f"{name}.__init__"))
    except project_imports.LoadError:
        return "inherited"


def _seed_everything(seed: int = 1234) -> None:
    """The same seeds before each side builds its object: equal weights."""
    import random

    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)
    keras = sys.modules.get("keras")
    tensorflow = sys.modules.get("tensorflow")
    if keras is not None and hasattr(keras, "utils"):
        with contextlib.suppress(Exception):
            keras.utils.set_random_seed(seed)
    elif tensorflow is not None:
        tensorflow.random.set_seed(seed)


loader.construct_from_script = construct


def for_loop(
    caller: dict[str, Any],
    original: str,
    rewrite: str | None,
    path: str,
    package: str | None,
    seconds: float,
) -> tuple[Callable[[], dict[str, Any]], Callable[[], dict[str, Any]]]:
    """The argument builders of a replayed loop's function, one per side:
    each side runs its own module's caller. A test imports the module from
    disk, so there the rewrite must not have changed what the arguments are
    made of."""
    found = Caller.from_json(caller)
    changed = changed_definitions(original, rewrite) if found.imports_module else frozenset()

    def build(source: str, role: str) -> Callable[[], dict[str, Any]]:
        def arguments() -> dict[str, Any]:
            captured = capture_arguments(found, source, path, package, role, seconds, changed)
            owner = captured.get("self")
            class_name = found.function.partition(".")[0]
            if owner is not None and f"{class_name}.__init__" in changed:
                raise CallerProblem(
                    f"{found.describe()} builds the `{class_name}` from the file on disk, "
                    "whose `__init__` the rewrite changed"
                )
            if owner is not None and found.imports_module and "." in found.function:
                # The script built the object from the class on disk: each
                # side runs the loop on the class as its own source has it.
                loader.load_function(
                    source,
                    found.function,
                    f"{role}-class",
                    path,
                    package,
                    factory=lambda cls: _adopt(owner, cls, found),
                )
            return captured

        return arguments

    return build(original, "original"), build(rewrite or original, "rewrite")


def _adopt(owner: Any, cls: type, caller: Caller) -> Any:
    """`owner`, an object of the class on disk, made an object of `cls` (the
    same class, loaded from one side's source)."""
    try:
        owner.__class__ = cls
    except TypeError as err:
        raise CallerProblem(
            f"the `{cls.__name__}` {caller.describe()} builds cannot be given the class as "
            f"the rewrite has it: {err}"
        ) from err
    return owner


def for_function(
    caller: dict[str, Any],
    original: str,
    rewrite: str | None,
    path: str,
    package: str | None,
    seconds: float,
) -> dict[str, Any]:
    """The arguments of a function compared as a function: built once, by
    the original's caller, and given to both sides, so the rewrite must not
    have changed what they are made of."""
    found = Caller.from_json(caller)
    changed = changed_definitions(original, rewrite)
    try:
        captured = capture_arguments(found, original, path, package, "original", seconds, changed)
        if "." in found.function:
            # The method is loaded bound to an object each side builds from
            # its own class; the caller's object is not carried over.
            captured.pop("self", None)
        return captured
    except CallerProblem as err:
        hint = caller.get("hint")  # how to give the arguments otherwise
        raise CallerProblem(f"{err}; {hint}" if hint else str(err)) from err


def as_inputs(
    captured: dict[str, Any], function: Any
) -> tuple[dict[str, Any], dict[str, Any], dict[str, TensorSpec]]:
    """Captured arguments as inputs of the usual checks: (the function's
    arguments, the other captured names as module globals, specifications
    of the floating-point arrays). Eager tensors become NumPy arrays: each
    call gets fresh tensors of them, gradients are taken with respect to the
    floating-point ones, and the branch search varies those."""
    params = inspect.signature(function).parameters
    arguments: dict[str, Any] = {}
    specs: dict[str, TensorSpec] = {}
    for name, value in captured.items():
        if name not in params:
            continue
        if type(value).__name__ == "EagerTensor":
            value = value.numpy()
        arguments[name] = value
        dtype = str(getattr(value, "dtype", ""))
        if type(value).__name__ == "ndarray" and dtype.startswith("float") and dtype in DTYPES:
            specs[name] = TensorSpec(dtype, tuple(value.shape), strict=False)
    provided = {k: v for k, v in captured.items() if k not in params}
    return arguments, provided, specs
