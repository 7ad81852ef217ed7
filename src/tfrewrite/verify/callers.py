"""Find the code that builds a function's arguments, for functions verify cannot call alone.

`train(epoch, model, optimizer)` cannot be called on synthesised tensors: it
needs a model, an optimizer, a dataset. But the project calls it somewhere
with real ones: the script's `main()`, its `if __name__ == "__main__":`
block, its top level, or a test of the repository (a `unittest.TestCase`
method, after `setUp`). A method (`agent.train(env)` after `agent =
Agent(...)`) is called by code that builds an object of its class first.

Finding that caller is static (`ast`, in the command line): this module
looks through the function's own file, then the project's test files, and
describes what it found as a `Caller`, which travels to the verification
worker as JSON. Running the caller there, up to its call, is
`caller_capture`. Standard library only.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

from tfrewrite.verify import project_imports
from tfrewrite.verify.module_slice import (
    bound_names,
    find_definition,
    is_main_guard,
    own_scope_nodes,
)
from tfrewrite.workspace.line_names import line_name

FILES_READ = 400  # test files, or scripts, of a repository looked through for a caller
FOLDERS = 3000  # folders walked to find them
_ARGV_NAMES = frozenset({"argv", "_", "args", "unused_argv"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SKIP_DIRS = frozenset({".git", "site-packages", "node_modules", "__pycache__", "build", "dist"})


@dataclass(frozen=True)
class Caller:
    """Code that calls `function` with arguments verify cannot make itself."""

    kind: str  # "function" (no parameters), "main" (the __main__ block), "module", "test"
    function: str  # the function whose arguments it builds
    name: str  # the caller function, or `Class.test_method`; "" for main and module
    line: int  # line of the call
    argv: bool = False  # a `main(argv)` called with `[path]`
    path: str = ""  # the test file, or the script, that imports the module; "" in its own file
    source: str = ""  # that file's text

    @property
    def imports_module(self) -> bool:
        """The caller is in another file (a test, a script), which imports
        the module from disk: its objects are of the classes as they are there."""
        return bool(self.path)

    def describe(self) -> str:
        of = f" of {os.path.basename(self.path)}" if self.path else ""
        if self.kind == "function":
            return f"`{self.name}()` ({line_name(self.line)}{of})"
        if self.kind == "main":
            return f'the `if __name__ == "__main__":` block ({line_name(self.line)}{of})'
        if self.kind == "module":
            return (
                f"the top level of {os.path.basename(self.path)} ({line_name(self.line)})"
                if of
                else f"the module's top level ({line_name(self.line)})"
            )
        after = f", after `{self.name.split('.')[0]}.setUp`"
        return f"`{self.name}` in {os.path.basename(self.path)} (line {self.line}{after})"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Caller:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _call_line(nodes: list[ast.stmt], matches: Callable[[ast.Call], bool]) -> int | None:
    """Line of the first call in `nodes` that `matches`, in source order."""
    lines = [
        n.lineno
        for stmt in nodes
        for n in own_scope_nodes(stmt)
        if isinstance(n, ast.Call) and matches(n)
    ]
    return min(lines) if lines else None


def _spelled(func: ast.expr, spellings: frozenset[str]) -> bool:
    """`func` names one of `spellings` (`Agent`, or `agents.Agent` through a module)."""
    if isinstance(func, ast.Name):
        return func.id in spellings
    return isinstance(func, ast.Attribute) and ast.unparse(func) in spellings


def _no_required(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[bool, bool]:
    """(callable without arguments, called with `[path]` as `main(argv)`)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    required = positional[: len(positional) - len(args.defaults)]
    if any(d is None for d in args.kw_defaults):
        return False, False
    if not required:
        return True, False
    if len(required) == 1 and node.name == "main" and required[0].arg in _ARGV_NAMES:
        return True, True
    return False, False


def same_file_caller(
    source: str,
    function: str,
    spellings: frozenset[str] | None = None,
    methods: frozenset[str] | None = None,
    tree: ast.Module | None = None,
) -> Caller | None:
    """A caller of the module-level `function` (or `Class.method`) in its own
    file: `main()`, the `__main__` block, the top level, or another function
    without parameters. A method's caller must build an object of its class
    first (`agent = Agent(env); agent.train(10)`): the object is captured as
    `self` with the other arguments. For a script that imports the module,
    `spellings` are how it names the function (or the class), `methods`
    the methods whose call reaches the one sought. `tree`: `source` parsed
    already."""
    if tree is None:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return None

    class_name, dot, method = function.rpartition(".")
    # `agent.train(x, y)` reaches `Agent.update` when `train` calls `self.update(...)`.
    if methods is None:
        methods = frozenset({method, *through_methods(tree, class_name, method)} if dot else ())
    if spellings is None:
        spellings = frozenset({class_name if dot else function})

    def direct(call: ast.Call) -> bool:
        if dot:  # `agent.train(env)`: a method, on an object the same code builds
            return isinstance(call.func, ast.Attribute) and call.func.attr in methods
        return _spelled(call.func, spellings)

    def constructs(call: ast.Call) -> bool:
        return _spelled(call.func, spellings)

    def call_line(nodes: list[ast.stmt], scope: list[ast.stmt] | None = None) -> int | None:
        """The line of the first call in `nodes`; for a method, only after
        the code of `scope` (default `nodes`) has built an object of its class."""
        line = _call_line(nodes, direct)
        if not dot or line is None:
            return line
        built = _call_line(nodes if scope is None else scope, constructs)
        return line if built is not None and built <= line else None

    functions = [
        s
        for s in tree.body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name != function
    ]
    found: list[Caller] = []
    for node in sorted(functions, key=lambda f: f.name != "main"):
        ok, argv = _no_required(node)
        line = call_line(node.body) if ok else None
        if line is not None:
            found.append(Caller("function", function, node.name, line, argv))
            if node.name == "main":
                return found[0]
    for stmt in tree.body:
        if is_main_guard(stmt):
            line = call_line(stmt.body)  # type: ignore[attr-defined]
            if line is not None:
                return Caller("main", function, "", line)
    runs = [s for s in tree.body if not isinstance(s, _DEFINITIONS) and not is_main_guard(s)]
    top = [s for s in tree.body if bound_names(s) is None and not is_main_guard(s)]
    top += [
        s
        for s in tree.body
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and _call_line([s], direct)
    ]
    line = call_line(top, runs)
    if line is not None:
        return Caller("module", function, "", line)
    if found or not dot:
        return found[0] if found else None
    # Reached through another object (`trainer = Trainer(env, agent);
    # trainer.train()` calling `self.agent.train_step()`): code that builds
    # an object of the class, then calls methods; it runs until the stub on
    # the method is reached, or says it never was.
    for node in sorted(functions, key=lambda f: f.name != "main"):
        ok, argv = _no_required(node)
        line = _after_construction(node.body, constructs) if ok else None
        if line is not None:
            return Caller("function", function, node.name, line, argv)
    for stmt in tree.body:
        if is_main_guard(stmt):
            line = _after_construction(stmt.body, constructs)  # type: ignore[attr-defined]
            if line is not None:
                return Caller("main", function, "", line)
    return None


def _after_construction(
    nodes: list[ast.stmt], constructs: Callable[[ast.Call], bool]
) -> int | None:
    """The line of the last method call (`trainer.train()`) after the code
    builds an object of the class, or None."""
    built = _call_line(nodes, constructs)
    if built is None:
        return None
    lines = [
        n.lineno
        for stmt in nodes
        for n in own_scope_nodes(stmt)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.lineno > built
    ]
    return max(lines) if lines else None


def through_methods(tree: ast.Module, class_name: str, method: str) -> list[str]:
    """Other methods of the module-level class `class_name` that call
    `self.<method>(...)`, directly or through each other: the script calls
    `agent.train(x, y)`, and `train` calls `self.update(x, y)`."""
    cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == class_name), None)
    if cls is None:
        return []
    calls: dict[str, set[str]] = {}  # method -> the methods it calls on `self`
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.args.args:
            me = item.args.args[0].arg
            calls[item.name] = {
                n.func.attr
                for n in own_scope_nodes(item)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == me
            }
    reached, todo = {method}, [method]
    while todo:
        target = todo.pop()
        for name, called in calls.items():
            if target in called and name not in reached:
                reached.add(name)
                todo.append(name)
    return sorted(reached - {method})


def _test_files(path: str) -> list[str]:
    """Test files (`test_*.py`, `*_test.py`) of the project around `path`,
    nearest first: the package's tree from its import root, or a script's
    folder, and `tests` folders beside or up to two folders above it."""
    return _project_files(path, tests=True)


def _script_files(path: str) -> list[str]:
    """The project's other modules and scripts around `path` (not tests),
    nearest first: where its training scripts (`main.py`, `train.py`) live."""
    return _project_files(path, tests=False)


def _is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py")


def _project_files(path: str, tests: bool) -> list[str]:
    package, root = project_imports.package_of(path)
    folder = os.path.dirname(os.path.abspath(path))
    tops = [root if package else folder]
    # A `tests` folder beside the code or up to two folders above it.
    above = tops[0]
    for _ in range(3 if tests else 0):
        tops += [
            os.path.join(above, t)
            for t in ("tests", "test")
            if os.path.isdir(os.path.join(above, t))
        ]
        above = os.path.dirname(above)
    found: list[str] = []
    folders = 0
    for top in dict.fromkeys(tops):
        for where, dirs, files in os.walk(top):
            folders += 1
            if folders > FOLDERS:
                break
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".py") and _is_test_file(name) == tests:
                    found.append(os.path.join(where, name))
            if len(found) >= FILES_READ:
                break
    found = list(dict.fromkeys(found))
    found = [f for f in found if os.path.abspath(f) != os.path.abspath(path)]
    return sorted(found, key=lambda f: (os.path.dirname(f) != folder, f.count(os.sep), f))


def _references(tree: ast.Module, test_path: str, path: str, function: str) -> tuple[set, set]:
    """How a test file names the module at `path` and its function: (module
    expressions such as `train_lib`, local names bound to the function).
    A dotted import names the module when the file's path ends with it (a
    package, or namespace folders from the repository's top); a plain one
    only from the module's own folder."""
    stem = os.path.splitext(os.path.abspath(path))[0]
    same_folder = os.path.dirname(os.path.abspath(test_path)) == os.path.dirname(stem)

    def names_module(dotted: str) -> bool:
        if "." not in dotted:
            return same_folder and dotted == os.path.basename(stem)
        return stem.endswith(os.sep + dotted.replace(".", os.sep))

    def relative(level: int, module: str | None, name: str) -> bool:
        folder = os.path.dirname(os.path.abspath(test_path))
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        parts = [*(module or "").split("."), name] if module else [name]
        return os.path.join(folder, *parts) == stem

    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if names_module(alias.name):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if node.level:
                    whole = relative(node.level, node.module, alias.name)
                    holder = bool(node.module) and relative(
                        node.level, *node.module.rpartition(".")[::2]
                    )
                else:
                    whole = names_module(f"{node.module}.{alias.name}")
                    holder = names_module(node.module or "")
                if whole:
                    modules.add(alias.asname or alias.name)
                elif holder and alias.name == function:
                    names.add(alias.asname or alias.name)
    return modules, names


def _importers(
    path: str, files: list[str], name: str
) -> Iterator[tuple[str, str, ast.Module, frozenset[str]]]:
    """The files among `files` that import the module at `path` and name
    `name` from it: (file, text, syntax tree, how it spells `name`: `fit`,
    `trainer.fit`). Files that do not mention both are not parsed."""
    short = os.path.splitext(os.path.basename(path))[0].encode()
    for file in files:
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if short not in data or name.encode() not in data:
            continue
        try:
            text = data.decode("utf-8")
            tree = ast.parse(text)
        except (UnicodeDecodeError, SyntaxError):
            continue
        modules, names = _references(tree, file, path, name)
        spellings = frozenset(names | {f"{m}.{name}" for m in modules})
        if spellings:
            yield file, text, tree, spellings


def test_caller(path: str, function: str) -> Caller | None:
    """A `unittest.TestCase` test method of the project that calls `function`
    of the module at `path` (after its `setUp`)."""
    for test_path, text, tree, spellings in _importers(path, _test_files(path), function):
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef) or not any(
                ast.unparse(b).endswith("TestCase") for b in cls.bases
            ):
                continue
            for method in cls.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                args = method.args
                if not method.name.startswith("test") or len(args.args) != 1 + len(args.defaults):
                    continue
                line = _call_line(method.body, lambda c, s=spellings: _spelled(c.func, s))
                if line is not None:
                    return Caller(
                        "test", function, f"{cls.name}.{method.name}", line, False, test_path, text
                    )
    return None


def script_caller(path: str, tree: ast.Module, function: str) -> Caller | None:
    """A script of the project that imports the module at `path` (whose
    syntax tree is `tree`) and calls `function` from its `main()`,
    `__main__` block, top level or a function without parameters; for
    `Class.method`, code that builds a `Class` and calls the method (or a
    method of the class that calls it): `reinforce/main.py` building
    `Agent(config, base_model, policy_model)` and calling
    `agent.training_step(obs, actions, returns)` in its loop."""
    class_name, dot, method = function.rpartition(".")
    methods = frozenset({method, *through_methods(tree, class_name, method)}) if dot else None
    sought = class_name if dot else function
    for script, text, script_tree, spellings in _importers(path, _script_files(path), sought):
        found = same_file_caller(text, function, spellings, methods, script_tree)
        if found is not None:
            return replace(found, path=script, source=text)
    return None


def find_caller(path: str, source: str, function: str) -> Caller | None:
    """The caller that builds `function`'s arguments: in its own file first,
    then in the project's tests, then in its scripts. Module-level functions
    and methods of module-level classes (`Agent.train`, whose caller builds
    the object first) have one."""
    parts = function.split(".")
    if len(parts) > 2 or not all(p.isidentifier() for p in parts):
        return None  # a module-level function, or a method of a module-level class
    try:
        tree = ast.parse(source)
        find_definition(tree, function)
    except (project_imports.LoadError, SyntaxError):
        return None
    found = same_file_caller(source, function, tree=tree)
    if found is None and len(parts) == 1 and os.path.isfile(path):
        found = test_caller(path, function)
    if found is None and os.path.isfile(path):
        found = script_caller(path, tree, function)
    return found
