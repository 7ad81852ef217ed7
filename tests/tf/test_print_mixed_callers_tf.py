"""TFR103 with mixed callers, shown under TensorFlow: traced, the original
prints at trace time only (and `Tensor(...)` for the tensor call); the
rewrite traced prints each call's value, as the original does eagerly."""

from __future__ import annotations

import importlib.util

import pytest
from tests.test_print_mixed_callers import SHOW
from tests.tf.fdcapture import capture_fds

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow


def _load(source: str, tmp_path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source.replace("show(1.5)\nshow(tf.constant(2.5))\n", ""))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _printed(function, arguments) -> list[str]:
    with capture_fds() as out:
        for argument in arguments:
            function(argument)
    return out.stdout_lines()


def test_the_rewrite_prints_every_call_in_both_traces(tmp_path) -> None:
    import tensorflow as tf

    arguments = [1.5, tf.constant(2.5), tf.constant(3.5)]
    original = _load(SHOW, tmp_path, "show_original")
    eager = _printed(original.show.python_function, arguments)
    assert [float(line.replace("tf.Tensor(", "").split(",")[0]) for line in eager] == [
        1.5,
        2.5,
        3.5,
    ]
    traced = _printed(original.show, arguments)
    assert len(traced) == 2 and "Tensor(" in traced[1]  # at trace time only
    fixed = _load(fix_source(SHOW, select=["TFR103"], unsafe_fixes=True), tmp_path, "show_fixed")
    assert [float(line) for line in _printed(fixed.show, arguments)] == [1.5, 2.5, 3.5]
