"""Harnesses verify writes itself for a train step nothing in the project runs.

A train step (`Trainer.train_step(self, x, y)` of a `Trainer(model,
optimizer)`, `train_step(model, optimizer, x, y)`) needs a model, an
optimizer and batches; when no loop of the project calls it and no harness
is configured, verify writes one: each parameter the code *calls* or whose
variables it reads is a model, a stand-in `keras.Sequential` of one `Dense`
layer that builds on its first input; each one whose `apply_gradients` or
`minimize` it calls is an optimizer (`SGD`); sizes and rates by their names
get small numbers; the batch parameters get arrays drawn as verify draws a
function's inputs (`signatures.candidates`, from how each is used), two full
batches and a short last one. The step's code is generic in the model it
is handed, so a stand-in proves the rewrite of that code as synthesised
inputs prove a function's; the result says it used stand-ins.

The harness is Python source, the same text verify runs and the user can
keep: copy it, build the real model in it, and configure it
(`harness."module:Trainer.train_step" = "verify_harness:build"`). A
parameter verify cannot stand in for (an environment, a configuration
object, a replay buffer) leaves the step "needs a harness", as before.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tfrewrite.verify import signatures
from tfrewrite.verify.inputs import (
    DictSpec,
    SequenceSpec,
    Spec,
    TensorSpec,
    ValueSpec,
    short_batch,
)

# What a model and an optimizer are asked for; either is called too (a
# model on its inputs), which is what tells a model from other objects.
_MODEL_ATTRIBUTES = frozenset(
    {
        "trainable_variables",
        "trainable_weights",
        "variables",
        "weights",
        "get_weights",
        "set_weights",
        "layers",
        "summary",
        "save_weights",
        "predict",
    }
)
_OPTIMIZER_ATTRIBUTES = frozenset({"apply_gradients", "minimize", "learning_rate", "lr"})
# Output widths a stand-in model tries: the classes verify's labels count,
# then one (a regression target, a critic's score).
_UNITS = (signatures.CLASSES, 1)
# Batch signatures tried per width, most likely first.
_SIGNATURES = 4
# The scales of the three batches' floating-point values: a step's loss
# then takes values far apart, on both sides of the thresholds a rewrite's
# `tf.cond` tests (which must take both branches to be proven).
_SCALES = (1.0, 5.0, 0.2)


class NoStandIn(Exception):
    """No harness with stand-ins can be written for the step: it needs the
    user's (the message says what to write)."""


@dataclass(frozen=True)
class GeneratedHarness:
    """One candidate: its source, and what it stands in, for the result."""

    source: str
    described: str


def guessed_number(name: str) -> object | None:
    """A small number for a parameter whose name says it is one (`n_actions`,
    `lr`, `gamma`, `latent_dim`); None otherwise."""
    name = name.lower()
    if name.endswith("_shape") or name == "shape":
        return (4,)
    if name in ("lr", "learning_rate") or name.endswith(("_lr", "_rate")):
        return 0.001
    if name in ("gamma", "tau", "discount", "alpha", "beta", "epsilon", "eps"):
        return 0.9
    if (
        name in ("size", "depth", "units", "n", "k")
        or name.endswith(
            ("_dim", "_size", "_units", "_len", "_length", "_num", "_count", "_actions")
        )
        or name.startswith(("num_", "n_"))
    ):
        return 4
    if name.endswith("_id"):
        return 1  # a token id, inside any vocabulary of size 4
    return None


def for_step(source: str, qualname: str) -> tuple[list[GeneratedHarness], str | None]:
    """`harnesses` for the train step `qualname` (`Class.method` or a
    module-level function) of `source`."""
    tree = ast.parse(source)
    *outer, name = qualname.split(".")
    owner = _class_named(tree, outer) if outer else None
    if outer and owner is None:
        return [], f"`{qualname}` is not a method of a module-level class"
    step = _method(owner, name) if owner is not None else _method(tree, name)
    if step is None:
        return [], f"`{qualname}` is not defined"
    return harnesses(tree, step, owner)


def builder(source: str) -> Callable[[], dict[str, Any]]:
    """The `build` function of a harness's source, run as its own module."""
    namespace: dict[str, Any] = {"__name__": "tfrewrite_stand_in_harness"}
    exec(compile(source, "<harness verify wrote>", "exec"), namespace)
    return namespace["build"]


def harnesses(
    tree: ast.Module, step: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None
) -> tuple[list[GeneratedHarness], str | None]:
    """Candidate harnesses for the train step `step` (a method of `owner`,
    or a function), most likely first; or ([], why none can be written)."""
    entries: dict[str, str] = {}  # name -> the code that builds it
    if owner is not None:
        arguments, why = constructor_arguments(owner)
        if arguments is None:
            return [], why
        entries.update(arguments)
    batch_params = []
    for name in signatures.parameters(step, owner is not None):
        code = _stand_in(name, _name_uses(step, name), numbers=False)
        if code is None:
            batch_params.append(name)
        else:
            entries[name] = code
    if not any(code.startswith(_MODEL) for code in entries.values()):
        return [], "verify finds no model among the parameters to stand in for"
    usages = signatures.analyse(tree, step, owner is not None)
    usages = {name: usages[name] for name in batch_params if name in usages}
    blocked = signatures.blockers(usages)
    if blocked or len(usages) != len(batch_params):
        return [], blocked[0] if blocked else "a batch parameter verify cannot draw"
    found = []
    for units, (label, specs) in itertools.product(
        _UNITS, itertools.islice(signatures.candidates(usages), _SIGNATURES)
    ):
        shorter = short_batch(specs)
        rows = [specs, specs, shorter[0] if shorter else specs]
        built = {k: v.replace("{units}", str(units)) for k, v in entries.items()}
        step_name = f"{owner.name}.{step.name}" if owner is not None else step.name
        source = _source(step_name, built, batch_params, rows)
        described = (
            ", ".join(f"{k} = {v.split('  #')[0]}" for k, v in built.items())
            + f"; batches of {signatures.describe(specs)} ({label}), the last one short"
        )
        found.append(GeneratedHarness(source, described))
    return found, None


def constructor_arguments(owner: ast.ClassDef) -> tuple[dict[str, str] | None, str | None]:
    """The code of a stand-in for each parameter `owner.__init__` requires
    (models by their use, optimizers, sizes by name), with `{units}` for a
    model's width; or (None, why) when one of them is none of these."""
    init = _method(owner, "__init__")
    arguments: dict[str, str] = {}
    for name in signatures.parameters(init, True) if init is not None else []:
        code = _stand_in(name, _attribute_uses(owner, init, name))  # type: ignore[arg-type]
        if code is None:
            return None, _cannot(name, owner.name)
        arguments[name] = code
    return arguments, None


def class_stand_ins(source: str, qualname: str) -> dict[str, str] | None:
    """Stand-ins to build an object of the class `qualname` of `source`
    whose `__init__` needs a model (`SNGAN(gen, dis)`, a trainer): each
    parameter's code, models `signatures.CLASSES` wide; None when the class
    needs no model or takes what verify cannot stand in for."""
    try:
        owner = _class_named(ast.parse(source), qualname.split("."))
    except SyntaxError:
        return None
    if owner is None:
        return None
    arguments, _ = constructor_arguments(owner)
    if not arguments or not any(code.startswith(_MODEL) for code in arguments.values()):
        return None
    units = str(signatures.CLASSES)
    return {name: code.replace("{units}", units) for name, code in arguments.items()}


_MODEL = "tf.keras.Sequential("
_MODEL_CODE = _MODEL + "[tf.keras.layers.Dense({units})])  # a stand-in: build your model here"
_OPTIMIZER_CODE = "tf.keras.optimizers.SGD(0.01)"


def _stand_in(name: str, uses: set[str], numbers: bool = True) -> str | None:
    """The code that builds a stand-in for a parameter used so (`call`, or
    the attributes read from it): a model, an optimizer, or (`numbers`) a
    number its name gives; None when it is none of these."""
    if not uses and numbers:
        # Only kept (`self.gen = gen`) where verify looks: what runs does not
        # read it, and nothing stands in.
        return "None"
    if uses & _OPTIMIZER_ATTRIBUTES:
        return _OPTIMIZER_CODE
    if "call" in uses or uses & _MODEL_ATTRIBUTES:
        return _MODEL_CODE
    number = guessed_number(name) if numbers else None
    return repr(number) if number is not None else None


def _cannot(name: str, owner: str) -> str:
    return (
        f"verify cannot stand in for `{name}`, which `{owner}.__init__` takes (neither a model, "
        "an optimizer nor a size by its name)"
    )


def _class_named(tree: ast.Module, parts: list[str]) -> ast.ClassDef | None:
    """The class `A.B` (`parts`: its names from the module down), the last
    definition of each name winning, as at run time."""
    owner: ast.Module | ast.ClassDef = tree
    for part in parts:
        found = [s for s in owner.body if isinstance(s, ast.ClassDef) and s.name == part]
        if not found:
            return None
        owner = found[-1]
    return owner if isinstance(owner, ast.ClassDef) else None


def _method(
    owner: ast.Module | ast.ClassDef, name: str
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The last `def name` of a class or module body."""
    found = None
    for stmt in owner.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            found = stmt
    return found


def _uses_of(nodes: Iterator[ast.AST], matches: object) -> set[str]:
    """How the expressions `matches` accepts are used: "call" when called,
    else the attributes read from them."""
    uses: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Call) and matches(node.func):  # type: ignore[operator]
            uses.add("call")
        elif isinstance(node, ast.Attribute) and matches(node.value):  # type: ignore[operator]
            uses.add(node.attr)
    return uses


def _name_uses(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> set[str]:
    return _uses_of(ast.walk(function), lambda node: isinstance(node, ast.Name) and node.id == name)


def _attribute_uses(
    cls: ast.ClassDef, init: ast.FunctionDef | ast.AsyncFunctionDef, name: str
) -> set[str]:
    """How the class uses what `__init__` takes as `name`: the parameter in
    `__init__`, and every `self.<attr>` it is kept in, in every method."""
    kept = {
        target.attr
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        for target in node.targets
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    }
    uses = _name_uses(init, name)
    return uses | _uses_of(
        ast.walk(cls),
        lambda node: (
            isinstance(node, ast.Attribute)
            and node.attr in kept
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ),
    )


def _source(
    step: str, entries: dict[str, str], batch_params: list[str], rows: list[dict[str, Spec]]
) -> str:
    """The harness module's text."""
    lines = [
        f'"""A harness tfrewrite wrote for `{step}`: stand-ins for what it',
        "trains and synthesised batches. Build your own model and data here, keep",
        'the file, and name it in [tool.tfrewrite.verify] harness."module:function"."""',
        "",
        "import numpy as np",
        "import tensorflow as tf",
        "",
        "",
        "def build():",
        "    rng = np.random.default_rng(0)",
    ]
    lines += [f"    {name} = {code}" for name, code in entries.items()]
    lines.append("    batches = [  # two full batches and a short last one, of three scales")
    for specs, scale in zip(rows, _SCALES, strict=True):
        lines.append("        (")
        lines += [f"            {_array(specs[name], scale)}," for name in batch_params]
        lines.append("        ),")
    lines.append("    ]")
    given = ", ".join(f'"{name}": {name}' for name in entries)
    lines.append(f'    return {{{given}{", " if given else ""}"batches": batches}}')
    return "\n".join(lines) + "\n"


def _array(spec: Spec, scale: float = 1.0) -> str:
    """Code that draws what `spec` describes with the harness's `rng`, its
    floating-point range times `scale`."""
    if isinstance(spec, ValueSpec):
        return repr(spec.value)
    if isinstance(spec, DictSpec):
        return "{" + ", ".join(f"{k!r}: {_array(v, scale)}" for k, v in spec.entries) + "}"
    if isinstance(spec, SequenceSpec):
        return "[" + ", ".join(_array(e, scale) for e in spec.elements) + "]"
    assert isinstance(spec, TensorSpec)
    shape = repr(tuple(spec.shape))
    if spec.is_float:
        low = (0.0 if spec.low is None else spec.low) * scale
        high = (1.0 if spec.high is None else spec.high) * scale
        return f'rng.uniform({low!r}, {high!r}, size={shape}).astype("{spec.dtype}")'
    if spec.dtype == "bool":
        return f"rng.random(size={shape}) < 0.5"
    low = 0 if spec.low is None else int(spec.low)
    high = signatures.CLASSES - 1 if spec.high is None else int(spec.high)
    return f'rng.integers({low}, {high + 1}, size={shape}).astype("{spec.dtype}")'
