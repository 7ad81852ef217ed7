"""Load one function with only the module-level code it depends on.

Training scripts often train at import time (`model.fit(...)` at the top
level), so verification never executes a whole file. Instead the module is
sliced with the standard `ast` module: starting from the function under test,
keep the top-level statements that bind a name it (transitively) references —
imports, constants, helper functions and classes — in their original order,
and drop everything else (bare calls, `if __name__ == "__main__":` blocks).

The slice is compiled from the original syntax tree, so line numbers in
tracebacks are the user's, and the full source is registered with `linecache`
so `inspect.getsource` (and therefore AutoGraph) sees the real text. Where
the slice's imports resolve, and what a failed one means, is
`project_imports`.

This module uses only the standard library: it runs inside verification
workers, which may live in another virtual environment.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import linecache
import os
import random
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tfrewrite.verify import appended, project_imports, sandbox
from tfrewrite.verify.module_slice import ModuleSlice, needed_statements, slice_module
from tfrewrite.verify.project_imports import LoadError
from tfrewrite.verify.stand_ins import class_stand_ins, guessed_number

MODULE_PREFIX = "tfrewrite_verify_"  # the modules verify loads from a side's source
_counter = itertools.count()


class Unreachable(LoadError):
    """The function lives where verification cannot build it from the module
    (a class defined inside a function)."""


@dataclass
class LoadedFunction:
    """A function loaded from a module slice."""

    module: types.ModuleType
    function: object  # the callable as the module exposes it (maybe a tf.function)
    python_function: object  # the plain Python function (or bound method)
    slice: ModuleSlice


def _register_source(filename: str, source: str) -> None:
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    # mtime None: linecache.checkcache keeps entries that have no file on disk.
    linecache.cache[filename] = (len(source), None, lines, filename)


# How to build an object of a class its `__init__` defaults cannot build, from
# the script's own code that constructs one: `(cls, source, path, package) ->
# (instance, how it was built) or None`. Set by `caller_capture` (it needs the caller
# machinery, which imports this module).
construct_from_script: Callable[[type, str, str, str | None], tuple[object, str] | None] | None = (
    None
)


def _resolve(
    module: types.ModuleType,
    qualname: str,
    factory: object = None,
    origin: tuple[str, str, str | None] | None = None,
    concrete: str | None = None,
) -> object:
    parts = qualname.split(".")
    # A configured factory says how to build the class: no subclass is sought.
    own_choice = not callable(factory)
    if concrete is not None and own_choice:
        # `Base.method` of an abstract class runs on its concrete subclass.
        built_with.pop(qualname, None)
        method = _instantiate(getattr(module, concrete), qualname, parts[-1], factory, origin)
        how = built_with.get(qualname)
        built_with[qualname] = (
            f"`{parts[0]}` is abstract: `{qualname}` was run on an instance of `{concrete}`, "
            "its concrete subclass in the module" + (f"; {how}" if how else "")
        )
        return method
    obj: object = module
    for i, part in enumerate(parts):
        if isinstance(obj, type) and i == len(parts) - 1:
            found = _project_subclass(obj, part, origin) if origin and own_choice else None
            if found is not None:
                subclass, where = found
                built_with.pop(qualname, None)
                method = _instantiate(subclass, qualname, part, factory, origin)
                how = built_with.get(qualname)
                built_with[qualname] = (
                    f"`{parts[0]}` is abstract: `{qualname}` was run on an instance of "
                    f"`{subclass.__name__}`, its concrete subclass in {where}"
                    + (f"; {how}" if how else "")
                )
                return method
            return _instantiate(obj, qualname, part, factory, origin)
        if i > 0 and not isinstance(obj, (type, types.ModuleType)):
            raise Unreachable(
                f"`{qualname}` is defined inside the function `{'.'.join(parts[:i])}`: verify "
                "builds functions and classes of the module, not ones a function creates when "
                "it runs; verify the function that creates it, with its inputs in "
                f'[tool.tfrewrite.verify] inputs."module:{".".join(parts[:i])}" or a harness'
            )
        obj = getattr(obj, part)
    return obj


def _project_subclass(
    cls: type, method: str, origin: tuple[str, str, str | None]
) -> tuple[type, str] | None:
    """For an abstract `cls` whose module has no concrete subclass, one in
    another file of its folder (`class Impl(Base)` in `impl.py`) that
    inherits `method` from it: `(the subclass, its file)`. The subclass's
    statement and what it needs are run from that file's text with `cls`
    (this side's class, original or rewrite) as its base, so the method run
    is the one being verified. None when there is none."""
    import inspect

    _, path, package = origin
    if not inspect.isabstract(cls) or path.startswith("<"):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    try:
        files = sorted(f for f in os.listdir(folder) if f.endswith(".py"))
    except OSError:
        return None
    for file in files:
        other = os.path.join(folder, file)
        if os.path.abspath(other) == os.path.abspath(path):
            continue
        try:
            with open(other, encoding="utf-8") as handle:
                text = handle.read()
            tree = ast.parse(text, filename=other) if cls.__name__ in text else None
        except (OSError, SyntaxError, ValueError):
            continue
        for stmt in tree.body if tree is not None else ():
            # Bases by plain name only (`from base import Base`): `base.Base`
            # would import the whole module as the project runs it.
            if not isinstance(stmt, ast.ClassDef) or not any(
                isinstance(b, ast.Name) and b.id == cls.__name__ for b in stmt.bases
            ):
                continue
            subclass = _run_subclass(text, tree, stmt.name, cls, other, package)
            if (
                isinstance(subclass, type)
                and issubclass(subclass, cls)
                and not inspect.isabstract(subclass)
                and next(k for k in subclass.__mro__ if method in k.__dict__) is cls
            ):
                return subclass, file
    return None


def _run_subclass(
    text: str, tree: ast.Module, name: str, base: type, path: str, package: str | None
) -> object:
    """Class `name` of another file, built on `base`: the statements it
    needs, except those binding `base`'s name (its import of the base).
    None when they fail."""
    _, keep = needed_statements(tree, [name], frozenset({base.__name__}))
    n = next(_counter)
    filename = f"{path} (subclass #{n})"
    _register_source(filename, text)
    module = types.ModuleType(f"{MODULE_PREFIX}subclass_{n}")
    module.__file__ = path
    if package:
        module.__package__ = package
    module.__dict__[base.__name__] = base
    sys.modules[module.__name__] = module
    body = [tree.body[i] for i in sorted(keep)]
    try:
        exec(compile(ast.Module(body=body, type_ignores=[]), filename, "exec"), module.__dict__)
    except Exception:
        return None
    return module.__dict__.get(name)


def module_file(source: str, path: str) -> str | None:
    """A file whose text is `source`, for a module's `__file__`: `path`
    itself when it holds that text (the original), else a file beside the
    mirror of `path` in the sandbox's working directory (the rewrite; that
    directory shows the script's folder, see `sandbox`); None outside a
    sandbox, where no file can be written."""
    if path.startswith("<"):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == source:
                return os.path.abspath(path)
    except (OSError, ValueError):
        pass
    return sandbox.write_beside(os.path.basename(path), source)


class ScriptFailed(Exception):
    """The project's code that builds a method's object failed before it
    built one (its message says where)."""


class NeedsFactory(LoadError):
    """A method's class cannot be built from its `__init__` defaults: the
    user must say how (a factory), so the method is not proven, not broken."""


# qualname -> how its class was built when `__init__` needed arguments (said in the result).
built_with: dict[str, str] = {}


def _constructor_guess(cls: type) -> dict[str, object] | None:
    """Arguments for a constructor whose required parameters are sizes,
    shapes, rates or token ids by their names (`Critic(state_dim)`,
    `Agent(n_actions, lr)`, `Extractor(subseq_length, padding_id)`), or
    numbers by their annotations (`num_heads: int`, `scale: float`); None
    when one of them is anything else (a model, an environment)."""
    import inspect

    try:
        params = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
    except (TypeError, ValueError):
        return None
    guessed: dict[str, object] = {}
    for p in list(params)[1:]:
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        number = guessed_number(p.name)
        if number is not None:
            guessed[p.name] = number
        elif _annotated(p, int):
            guessed[p.name] = 4
        elif _annotated(p, float):
            guessed[p.name] = 0.1
        else:
            return None
    return guessed or None


def _annotated(param: Any, kind: type) -> bool:
    """`param: int` (or the string `"int"` under postponed annotations)."""
    return param.annotation is kind or param.annotation == kind.__name__


def _instantiate(
    cls: type,
    qualname: str,
    method: str,
    factory: object = None,
    origin: tuple[str, str, str | None] | None = None,
) -> object:
    """A method of a class is called on an instance built from the class's
    `__init__` defaults (`Loss.call` needs `self`), by a configured factory
    `(cls) -> instance`, or by the script's own code that constructs one
    (`agent = PERAgent(model, target, env)` in `main()`)."""
    try:
        with _seeded_build():
            instance = _construct(cls, qualname, factory, origin)
        # A bound `tf.function` method holds its object weakly: keep it alive.
        project_imports.kept.append(instance)
    except Exception as err:
        found = project_imports.missing_package(err)
        if found is not None:
            raise found from err
        detail = str(err) if isinstance(err, ScriptFailed) else repr(err)
        raise NeedsFactory(
            f"cannot construct `{cls.__name__}()` to call `{qualname}`: {detail}; configure a "
            f'factory: [tool.tfrewrite.verify] harness."module:{cls.__name__}" = '
            '"verify_harness:make" with `def make(cls): return cls(...)`'
        ) from err
    return getattr(instance, method)


@contextlib.contextmanager
def _seeded_build() -> Iterator[None]:
    """Objects are built under one seed, the same on both sides: Keras 3
    fixes an unseeded initializer's seed when the layer is constructed
    (drawn from Python's random stream), so the original's and the
    rewrite's models start with equal weights. Python's and NumPy's random
    streams then go on as they were."""
    tf, np = sys.modules.get("tensorflow"), sys.modules.get("numpy")
    python_state = random.getstate()
    numpy_state = np.random.get_state() if np is not None else None
    random.seed(BUILD_SEED)
    if np is not None:
        np.random.seed(BUILD_SEED)
    if tf is not None:
        tf.random.set_seed(BUILD_SEED)  # Keras 2 draws initial weights from TensorFlow's
    try:
        yield
    finally:
        random.setstate(python_state)
        if np is not None:
            np.random.set_state(numpy_state)


def _construct(
    cls: type, qualname: str, factory: object, origin: tuple[str, str, str | None] | None
) -> object:
    """An instance of `cls`: from the configured factory, the class's
    defaults, the script that builds one, or arguments guessed from the
    parameters' names."""
    if callable(factory):
        return factory(cls)
    try:
        return cls()
    except TypeError as first:
        guessed = _constructor_guess(cls)
        built = None
        if guessed is None and origin is not None and construct_from_script is not None:
            built = construct_from_script(cls, *origin)
        if built is not None:
            instance, how = built
            built_with[qualname] = how
            return instance
        if guessed is None and origin is not None:
            stood_in = _built_on_stand_ins(cls, qualname, origin[0])
            if stood_in is not None:
                return stood_in
        if guessed is None:
            raise first
        built_with[qualname] = (
            f"`{cls.__name__}` was built as `{cls.__name__}("
            + ", ".join(f"{k}={v!r}" for k, v in guessed.items())
            + ")` from its parameter names; configure a factory to build it otherwise"
        )
        return cls(**guessed)


def _built_on_stand_ins(cls: type, qualname: str, source: str) -> object | None:
    """An object of `cls` whose `__init__` takes models (`SNGAN(gen, dis)`),
    built with stand-ins for them (`stand_ins.class_stand_ins`); None when
    verify has none for its parameters."""
    codes = class_stand_ins(source, cls.__qualname__)
    if codes is None:
        return None
    namespace = {"tf": sys.modules["tensorflow"]}
    arguments = {name: eval(code, namespace) for name, code in codes.items()}  # noqa: S307
    instance = cls(**arguments)
    built_with[qualname] = (
        f"`{cls.__name__}` was built with stand-ins: "
        + ", ".join(f"{name} = {code.split('  #')[0]}" for name, code in codes.items())
        + "; configure a factory to build it otherwise"
    )
    return instance


def load_function(
    source: str,
    qualname: str,
    role: str,
    path: str = "<source>",
    package: str | None = None,
    tree: ast.Module | None = None,
    extra_globals: dict[str, object] | None = None,
    factory: object = None,
    provided: dict[str, object] | None = None,
) -> LoadedFunction:
    """Execute the slice of `source` needed by `qualname` as a fresh module
    named after `role` (each call gets its own module object, so an original
    and its rewrite live side by side).

    `tree` replaces the slice's syntax tree (used for instrumented copies);
    `extra_globals` are placed in the module before it runs."""
    piece = slice_module(source, qualname, path, frozenset(provided or ()))
    if tree is not None:
        piece = ModuleSlice(
            tree, piece.kept, piece.constants, piece.flags, piece.unreached, piece.concrete
        )
    n = next(_counter)
    name = f"{MODULE_PREFIX}{role}_{n}"
    filename = f"{path} ({role} #{n})"  # not a real file: the source lives in linecache
    _register_source(filename, source)
    module = types.ModuleType(name)
    # The code is compiled under `filename` (its source in linecache), while
    # `__file__` names a real file holding the same text: data paths read
    # from `os.path.dirname(__file__)` resolve, and tools that re-read a
    # module's source (typeguard's `@typechecked`) read this version of it.
    file = module_file(source, path)
    if file is not None:
        module.__file__ = file
    if package:
        module.__package__ = package
    if extra_globals:
        module.__dict__.update(extra_globals)
    if provided:
        module.__dict__.update(provided)
    sys.modules[name] = module  # Keras serialization and pickling look modules up by name
    appended.relocate(piece.tree, source)  # a replay or caller keeps the script's lines
    compiled = piece.tree
    if piece.unreached:
        module.__dict__[_STAND_IN] = project_imports.stand_in
        compiled = _guard_unreached_imports(piece.tree, piece.unreached, path)
    code = compile(compiled, filename, "exec")
    try:
        exec(code, module.__dict__)
    except Exception as err:  # an ImportError, or TensorFlow's op library not found
        found = project_imports.missing_package(err)
        if found is not None:
            raise found from err
        if not isinstance(err, ImportError):
            raise
        problem = project_imports.project_import_problem(err, path)
        if problem is not None:
            raise LoadError(problem) from err
        raise
    function = _resolve(module, qualname, factory, (source, path, package), piece.concrete)
    python_function = getattr(function, "python_function", function)
    # A bound method of a tf.function-decorated method exposes its own python_function.
    if _unbuilt_layer_call(python_function):
        python_function = _built_on_first_call(python_function)
    return LoadedFunction(module, function, python_function, piece)


def _unbuilt_layer_call(function: object) -> bool:
    """`call` of a Keras layer whose `build` has not run (verify calls `call`
    itself, not `layer(x)`, which would build it)."""
    owner = getattr(function, "__self__", None)
    return (
        getattr(function, "__name__", "") == "call"
        and callable(getattr(owner, "build", None))
        and getattr(owner, "built", None) is False
    )


BUILD_SEED = 4321  # the seed a layer's weights are drawn under, the same on both sides


def _built_on_first_call(call: Any) -> Any:
    """`call` of a layer that is built on its first call, as `layer(x)`
    builds it: `build` with the shapes of the first argument, outside any
    trace (its weights are created once, eagerly), then `call`. The weights
    are drawn under one seed, so both sides' layers start equal wherever
    their first call falls; Python's random stream then goes on as it was."""
    layer = call.__self__

    @functools.wraps(call)
    def built_call(*args: Any, **kwargs: Any) -> Any:
        if not layer.built:
            tf = sys.modules["tensorflow"]
            first = args[0] if args else next(iter(kwargs.values()), None)
            shapes = tf.nest.map_structure(lambda t: tf.TensorShape(t.shape), first)
            state = random.getstate()
            random.seed(BUILD_SEED)  # Keras 3 seeds unseeded initializers from it
            tf.random.set_seed(BUILD_SEED)  # Keras 2 draws them from TensorFlow's
            try:
                with tf.init_scope():
                    layer.build(shapes)
            finally:
                random.setstate(state)
        return call(*args, **kwargs)

    return built_call


_STAND_IN = "__tfrewrite_stand_in__"


def _guard_unreached_imports(tree: ast.Module, lines: set[int], path: str) -> ast.Module:
    """A copy of `tree` whose top-level imports on `lines` bind stand-ins
    (see `project_imports.StandIn`) when they fail:

        try:
            import cv2
        except ImportError as error:
            __tfrewrite_stand_in__(error, globals(), {"cv2": "cv2"}, "m.py, line 3")
    """
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)) or stmt.lineno not in lines:
            body.append(stmt)
            continue
        bindings: dict[str, str] = {}
        for alias in stmt.names:
            if isinstance(stmt, ast.Import):
                bound = alias.asname or alias.name.split(".")[0]
                bindings[bound] = alias.name if alias.asname else bound
            else:
                module = "." * stmt.level + (stmt.module or "")
                bindings[alias.asname or alias.name] = f"{module}.{alias.name}"
        importer = f"{os.path.basename(path)}, line {stmt.lineno}"
        handler = ast.parse(
            "try:\n    pass\nexcept ImportError as __tfrewrite_error:\n"
            f"    {_STAND_IN}(__tfrewrite_error, globals(), {bindings!r}, {importer!r})\n"
        ).body[0]
        assert isinstance(handler, ast.Try)
        handler.body = [stmt]
        for node in ast.walk(handler):
            if node is not stmt and not _inside_node(node, stmt):
                ast.copy_location(node, stmt)
                if hasattr(node, "end_lineno"):
                    node.end_lineno = stmt.end_lineno  # type: ignore[attr-defined]
        body.append(handler)
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def _inside_node(node: ast.AST, stmt: ast.stmt) -> bool:
    return any(node is sub for sub in ast.walk(stmt))
