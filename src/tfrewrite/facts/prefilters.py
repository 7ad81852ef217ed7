"""Pass-1 questions that let a rule skip a file without parsing it with LibCST.

Parsing with LibCST is most of the cost of a check, and most files that a
rule could look at hold nothing it reports. These helpers answer, from the
standard `ast` tree or the `ModuleIndex`, questions whose "no" proves a rule
has nothing to find; every "maybe" keeps the file. They must stay at least as
generous as the rules they guard: a test per prefilter checks a file it must
not skip.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tfrewrite.facts.python_conditions import bindings

if TYPE_CHECKING:
    from tfrewrite.facts.index_records import ModuleIndex


# Methods that mutate a Python container in place (TFR202).
MUTATING_METHODS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "add",
        "setdefault",
        "discard",
        "popitem",
    }
)


def own_local_names(function: ast.FunctionDef | ast.AsyncFunctionDef, walrus: bool) -> set[str]:
    """Names surely local to `function`, as TFR202 reads locals: its
    parameters and the names its own body assigns (loop and `with` targets,
    `except ... as`, `:=` included), not those only a nested function or
    class binds, nor names declared `global` or `nonlocal`. Imports and
    nested definitions are left out: a prefilter may take a local for an
    outside name, never the reverse."""
    args = function.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = {a.arg for a in params if a is not None}
    for name, nodes in bindings(function, walrus, nested=False).by_name.items():
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in nodes):
            found.discard(name)
        elif any(isinstance(n, (ast.Name, ast.ExceptHandler)) for n in nodes):
            found.add(name)
    return found


# Leaves of the callees that make a variable: `tf.Variable(...)`,
# `keras.backend.variable(...)`, `self.add_weight(...)` (`attribute_facts`).
_VARIABLE_MAKERS = frozenset({"Variable", "variable", "add_weight", "add_variable"})


def self_attribute_from_call(node: ast.Assign | ast.AnnAssign) -> str | None:
    """`x` for `self.x = f(...)` (or `self.x: T = f(...)`) where `f` may
    make a variable: an attribute the tensor analysis may take for one
    (`attribute_facts`), whatever the names resolve to."""
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
    else:
        target = node.target
    value = node.value
    if not (
        isinstance(value, ast.Call)
        and isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    ):
        return None
    func = value.func
    leaf = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return target.attr if leaf in _VARIABLE_MAKERS else None


def traced_callees(index: ModuleIndex, traced_qualnames: Iterable[str]) -> set[str]:
    """Every callee named in this file's traced code: the calls of each
    traced function and of everything defined inside it (a nested function,
    a method of a nested class), and those in default arguments, which a
    function nested in traced code evaluates while traced."""
    roots = tuple(traced_qualnames)
    if not roots:
        return set()
    prefixes = tuple(f"{q}." for q in roots)
    found = set(index.default_calls)
    for qualname, info in index.functions.items():
        if qualname in roots or qualname.startswith(prefixes):
            found.update(info.calls)
    return found


def assigns_an_attribute(data: bytes, attributes: set[str]) -> bool:
    """A cheap byte test: `data` assigns `<name>.<attribute> = ...` (or
    `+=` and the like) for one of `attributes`: a script that imports no
    TensorFlow, yet rebinds `config.SCALE` that traced code reads elsewhere."""
    if b"=" not in data:
        return False
    for attribute in attributes:
        word = b"." + attribute.encode()
        start = data.find(word)
        while start >= 0:
            end = start + len(word)
            rest = data[end : end + 4].lstrip(b" \t")
            named = start > 0 and (data[start - 1 : start].isalnum() or data[start - 1] == 95)
            next_char = data[end : end + 1]
            whole = not (next_char.isalnum() or next_char == b"_")
            if (
                named
                and whole
                and (
                    (rest[:1] == b"=" and rest[1:2] != b"=")
                    or rest[1:2] == b"="
                    and rest[:1] in b"+-*/"
                )
            ):
                return True
            start = data.find(word, end)
    return False
