"""TFR202: a container every caller of a method builds afresh before
calling it (`self._seen = Counter()`, then the method fills it) is scratch
state of that call, not state kept between calls: filling it traced is
what filling it eagerly does."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SCRATCH = """
import collections

import tensorflow as tf


class Named(tf.keras.Model):
    def __init__(self, inner, heads):
        super().__init__()
        self.inner = inner
        self.heads = heads
        self._names = None

    def _unique(self, base):
        if base not in self._seen:
            self._seen[base] = 1
            return base
        self._seen[base] += 1
        return f"{base}_{self._seen[base]}"

    def _build_names(self):
        if self._names:
            return
        self._seen = collections.Counter()
        self._names = [self._unique(h) for h in self.heads]
        del self._seen

    def call(self, x):
        self._build_names()
        return self.inner(x)
"""


def test_a_container_each_caller_builds_afresh_is_scratch_state() -> None:
    assert check_source(textwrap.dedent(SCRATCH), select=["TFR202"]) == []


def test_a_container_one_caller_keeps_is_still_outside_state() -> None:
    """A second caller that does not build it afresh fills what the last call left."""
    source = SCRATCH + textwrap.indent(
        textwrap.dedent(
            """
            def rename(self, base):
                return self._unique(base)
            """
        ),
        "    ",
    )
    lines = [f.start.line for f in check_source(textwrap.dedent(source), select=["TFR202"])]
    assert lines == [16, 18]


def test_scratch_built_by_the_callers_caller() -> None:
    """The container is built afresh two calls up: `build` makes it, then
    calls the helpers that call the method that fills it."""
    source = """
    import collections

    import tensorflow as tf


    class Heads(tf.keras.Model):
        def _name_for(self, base):
            self._count[base] += 1
            return f"{base}_{self._count[base]}"

        def _loss_names(self, heads):
            return [self._name_for(h) for h in heads]

        def _metric_names(self, heads):
            return [self._name_for(h) for h in heads]

        def _build(self, heads):
            self._count = collections.Counter()
            self.names = self._loss_names(heads) + self._metric_names(heads)
            del self._count

        def call(self, x):
            self._build(["a", "b"])
            return x
    """
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []


RESET_FIRST = """
import tensorflow as tf


class Trainer:
    def __init__(self, weight):
        self.weight = weight
        self.losses = {}

    def reset_losses(self):
        self.losses = {"pixel": 0.0, "smooth": 0.0}

    @tf.function
    def compute_losses(self, errors, gradients):
        {first}
        for error, gradient in zip(errors, gradients):
            self.losses["pixel"] += tf.reduce_mean(error)
            self.losses["smooth"] += self.weight * tf.reduce_mean(tf.abs(gradient))
        self.losses["total"] = self.losses["pixel"] + self.losses["smooth"]
        return self.losses
"""


def test_a_container_the_method_resets_through_an_own_method_first_is_scratch() -> None:
    """`self.reset_losses()` gives `self.losses` a new dict on every call
    before the writes: what the method fills is this call's, returned."""
    source = RESET_FIRST.replace("{first}", "self.reset_losses()")
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []


def test_a_reset_after_a_read_keeps_the_writes_reported() -> None:
    """Read before the reset: the method sees what the last call left."""
    source = RESET_FIRST.replace(
        "{first}", 'previous = self.losses.get("total")\n        self.reset_losses()'
    )
    found = check_source(textwrap.dedent(source), select=["TFR202"])
    assert len(found) == 3


ENCLOSING_TRACE = """
import tensorflow as tf


def make_step(step_fn, steps):
    def run(iterator):
        empty = tf.experimental.Optional.empty(None)
        seen = []

        def has_next():
            out = tf.experimental.Optional.from_value(step_fn(iterator.get_next()))
            empty._element_spec = out.element_spec
            seen.append(out)
            return out

        def no_next():
            return empty

        return tf.cond(tf.constant(steps > 0), has_next, no_next)

    return tf.function(run)
"""


def test_state_a_traced_enclosing_function_makes_is_that_traces_scratch() -> None:
    """`empty` and `seen` are made by `run`, which runs traced: the nested
    branch function that sets `empty`'s attribute and fills `seen` runs in
    the same trace, so both are made afresh for each trace: no finding."""
    assert [f.code for f in check_source(ENCLOSING_TRACE, select=["TFR202"])] == []


def test_state_an_eager_enclosing_function_makes_is_still_outside_state() -> None:
    """The same state made by an eager function around a traced one lives
    across its calls: still reported."""
    eager = ENCLOSING_TRACE.replace("    return tf.function(run)\n", "    return run\n").replace(
        "        def has_next():", "        @tf.function\n        def has_next():"
    )
    codes = [f.code for f in check_source(eager, select=["TFR202"])]
    assert codes == ["TFR202", "TFR202"]
