"""Shared oracle for rewrite tests: the original run eagerly must equal the
rewrite run eagerly and traced (with `autograph=False` where the rewrite
claims to remove the need for AutoGraph), as AutoGraph's own
`assertFunctionMatchesEager` does."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import sys
import textwrap
import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
import tensorflow as tf

_counter = itertools.count()


def load_module(source: str, name: str | None = None) -> types.ModuleType:
    """Execute `source` as a fresh module (each call gets its own namespace)."""
    module = types.ModuleType(name or f"tfrewrite_test_module_{next(_counter)}")
    exec(compile(textwrap.dedent(source), module.__name__, "exec"), module.__dict__)
    return module


def load_file_module(source: str, directory: Path, prefix: str = "case") -> types.ModuleType:
    """Import `source` from a real file in `directory`: AutoGraph converts
    only functions whose source it can read."""
    name = f"tfrewrite_{prefix}_{next(_counter)}"
    path = directory / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return load_path(path, name)


def load_path(path: Path, name: str) -> types.ModuleType:
    """Import the file `path` as the module `name` (a script of `scripts/`
    that generates a committed table, to run it again)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def import_from(folder: Path, name: str, stale: Iterable[str] = ()) -> types.ModuleType:
    """Import the module `name` of the project written in `folder`, as its
    own scripts import each other, after forgetting `name` and the project's
    other modules (`stale`) that a test imported from another folder."""
    for module in (*stale, name):
        sys.modules.pop(module, None)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))


def python_function(fn: Callable) -> Callable:
    """The plain Python function under a `tf.function` wrapper, if any."""
    return getattr(fn, "python_function", fn)


def run_eagerly(fn: Callable, *args, **kwargs):
    """Run `fn` eagerly even if it is decorated with `@tf.function`."""
    previous = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)
    try:
        return fn(*args, **kwargs)
    finally:
        tf.config.run_functions_eagerly(previous)


def _to_numpy(value):
    if isinstance(value, (tuple, list)):
        return [_to_numpy(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_numpy(v) for k, v in value.items()}
    if tf.is_tensor(value) or isinstance(value, tf.Variable):
        return value.numpy()
    return np.asarray(value)


def assert_same(expected, actual, rtol: float = 1e-6, atol: float = 1e-6, what: str = "") -> None:
    expected, actual = _to_numpy(expected), _to_numpy(actual)
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(expected) == len(actual), what
        for e, a in zip(expected, actual, strict=True):
            assert_same(e, a, rtol, atol, what)
        return
    if isinstance(expected, dict):
        assert expected.keys() == actual.keys(), what
        for key in expected:
            assert_same(expected[key], actual[key], rtol, atol, f"{what}[{key}]")
        return
    assert expected.shape == actual.shape, f"{what}: shape {expected.shape} != {actual.shape}"
    assert expected.dtype == actual.dtype, f"{what}: dtype {expected.dtype} != {actual.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def assert_rewrite_equivalent(
    original_source: str,
    rewritten_source: str,
    function_name: str,
    inputs: Iterable[Sequence],
    autograph: bool = False,
    rtol: float = 1e-6,
    atol: float = 1e-6,
) -> None:
    """For every argument tuple: original eager == rewrite eager == rewrite
    traced (with `autograph` as given, False by default)."""
    original = python_function(getattr(load_module(original_source), function_name))
    rewritten = python_function(getattr(load_module(rewritten_source), function_name))
    traced = tf.function(rewritten, autograph=autograph)
    for args in inputs:
        expected = run_eagerly(original, *args)
        eager = run_eagerly(rewritten, *args)
        assert_same(expected, eager, rtol, atol, f"eager rewrite on {args!r}")
        assert_same(expected, traced(*args), rtol, atol, f"traced rewrite on {args!r}")
