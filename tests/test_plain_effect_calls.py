"""TFR202 on a traced step calling a method of a plain Python object for
its effect (`self.schedule.step()`): the method sets attributes of its
object (a counter, the learning rate it derives), which happens on every
call eagerly and once, while tracing, under `tf.function`. A method that
sets nothing (a check run at trace time) is left alone, and so is one
whose result the step uses (it runs traced, and is checked as traced code)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SCHEDULED = textwrap.dedent(
    """
    import tensorflow as tf


    class Schedule:
        def __init__(self):
            self.count = 0
            self.rate = 0.1

        def step(self):
            self.count += 1
            self.rate = 0.1 / self.count

        def check(self):
            assert self.rate > 0


    class Agent:
        def __init__(self):
            self.schedule = Schedule()
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            self.optimizer = tf.keras.optimizers.SGD()

        @tf.function
        def learn(self, x):
            self.schedule.{called}()
            self.optimizer.learning_rate.assign(self.schedule.rate)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(x, training=True))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss
    """
)


def test_a_method_setting_its_objects_state_runs_once() -> None:
    (finding,) = check_source(SCHEDULED.replace("{called}", "step"), select=["TFR202"])
    assert finding.start.line == 26
    assert finding.message.startswith(
        "`self.schedule.step(...)` runs `Schedule.step` of a plain Python object for its "
        "effect (it changes `self.count`, `self.rate`) inside traced `Agent.learn`"
    )
    assert finding.fix is None


def test_a_method_that_sets_nothing_is_left_alone() -> None:
    assert check_source(SCHEDULED.replace("{called}", "check"), select=["TFR202"]) == []


ACCUMULATED = textwrap.dedent(
    """
    import tensorflow as tf


    class Accumulator:
        def __init__(self):
            self.sums = []

        def __call__(self, gradients):
            if not self.sums:
                self.sums.extend([tf.Variable(tf.zeros_like(g)) for g in gradients])
            for total, gradient in zip(self.sums, gradients):
                total.assign_add(gradient)


    class Trainer:
        def __init__(self):
            self.accumulate = Accumulator()
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

        @tf.function
        def step(self, x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(x, training=True))
            self.accumulate(tape.gradient(loss, self.model.trainable_variables))
            return loss
    """
)


def test_set_up_once_under_a_test_that_it_is_unset_is_no_per_call_effect() -> None:
    """The accumulator fills its list of variables only while the list is
    empty (on the first call, or trace, alike); every later call adds to
    the variables, which the graph does too."""
    assert check_source(ACCUMULATED, select=["TFR202"]) == []


TRACKED = textwrap.dedent(
    """
    import tensorflow as tf


    class Tracker:
        def __init__(self):
            self.stored = []

        def add(self, value):
            self.stored.append(value)


    class Scale(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.tracker = Tracker()

        def make_weight(self):
            weight = tf.Variable(1.0)
            self.tracker.add(weight)
            return weight

        def call(self, x):
            if not hasattr(self, "scale"):
                self.scale = self.make_weight()
            return x * self.scale
    """
)


def test_set_up_a_traced_step_only_reaches_is_left_alone() -> None:
    """`make_weight` runs traced only as what `call` reaches to set the
    layer up (once); its tracker's `add` is no per-call effect of a step."""
    assert check_source(TRACKED, select=["TFR202"]) == []
