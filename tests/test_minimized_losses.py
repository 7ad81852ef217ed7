"""A loss an optimizer's `minimize` differentiates, through the callable it
is handed (a function the step defines, or a lambda), is a loss of that
step: its own `@tf.function` is a redundant graph boundary (TFR301)."""

from __future__ import annotations

import textwrap

from tests.minimized_steps import MINIMIZED, MINIMIZED_LAMBDA

from tfrewrite.api import check_source, fix_source


def test_a_decorated_loss_a_closure_hands_minimize_is_reported() -> None:
    for source in (MINIMIZED, MINIMIZED_LAMBDA):
        found = [(f.code, f.start.line) for f in check_source(textwrap.dedent(source))]
        assert ("TFR301", 6) in found


def test_the_fix_removes_only_the_loss_decorator() -> None:
    fixed = fix_source(textwrap.dedent(MINIMIZED), select=["TFR301"])
    assert fixed.count("@tf.function") == 1
    assert "    @tf.function\n    def fit_step" in fixed


def test_a_callable_minimize_is_not_handed_is_no_loss() -> None:
    # `minimize` takes the tensor itself here (TF1 style): nothing to follow.
    source = MINIMIZED.replace(
        "optimizer.minimize(objective, model.trainable_variables)",
        "optimizer.minimize(objective(), model.trainable_variables)",
    )
    found = [(f.code, f.start.line) for f in check_source(textwrap.dedent(source))]
    assert ("TFR301", 6) not in found
