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
