"""TFR201: mutable module-level Python state read in traced code."""

from __future__ import annotations

from collections.abc import Iterator

from tfrewrite.facts.context import RuleContext
from tfrewrite.facts.frozen_state import FrozenState
from tfrewrite.findings import Applicability
from tfrewrite.rewrite.fixes import Violation
from tfrewrite.rules.base import Invalid, Rule, Valid


class ModuleStateInTracedCode(Rule):
    code = "TFR201"
    name = "module-state-in-traced-code"
    summary = "Mutable module-level Python value read in traced code is frozen at trace time"
    fix_applicability = Applicability.NONE
    explanation = """
    ## What it does
    Finds traced functions that read Python state that changes between
    their calls: a module-level value (a flag, a number, a string) the
    module rebinds (a `global` assignment in a function, a second
    module-level assignment after the function may first run, or the
    module's own epoch loop: `lr_scale = 1.0 / (epoch + 1)`), a module dict
    whose items are changed, a `self` attribute another method rebinds or
    counts up (to a number, to what an own method computes in Python:
    `self.tau = self.next_tau()`, or to a local holding such a value:
    `points, targets = self.sampler.draw()`, then `self.points = points`),
    a counter of an object the class holds
    (`self.memory.mem_cntr`, counted by the buffer's own method), an
    attribute of a class or an imported module that a function or a
    module-level loop assigns (`Schedule.margin = epoch / 10`,
    `config.SCALE = ...`; another module's `config.LR = ...` rebinds the
    `LR` of `config` too), or a variable the enclosing function's loop
    rebinds (a function defined inside that loop is defined, and traced,
    afresh on every iteration: it reads each iteration's value, and is not
    reported). An attribute code elsewhere rebinds in a loop on an object
    of the class (`agent.noise = noise * decay` in a script's episode
    loop, `agent = Agent(...)` in that function or module) is such state
    for the class's traced methods; an object the loop builds afresh in
    each pass and sets up before use is not. An attribute a Keras callback
    sets on the model `fit` runs (`self.model.teacher = load_model(...)` in
    `on_epoch_begin`) is such
    state too, and so is an object there: the step that calls
    `self.teacher(x)` keeps calling the teacher of its first trace, and a
    new one is never run. A script or notebook written in sections, which sets a value
    again only after the last call of the function that reads it (or before
    its first), freezes nothing; nor does restating the same literal, nor
    setting a module value again before mapping again (`Dataset.map` traces
    its function afresh on every `.map` call; a counter that changes while
    one pipeline is iterated is still frozen). Attributes set up once
    (in `__init__`, `build`, or a method only `__init__` calls) are not state.
    A train step about to be decorated (TFR302) is checked the same way, and
    lists what it reads as a reason not to decorate it.

    ## Why is this bad?
    `@tf.function` reads Python values once, while tracing, and bakes them
    into the graph. Changing the flag later changes nothing: the traced loss
    keeps the branch of its first call (measured: 0.6667 before and after the
    flag flipped). Eagerly, the same code follows the flag.

    ## How to fix it
    Make the value a graph input: pass it as an argument (a `tf.constant` or a
    tensor, not a Python bool, which would retrace), or keep it in a
    `tf.Variable` and `assign` it. `tfrewrite verify` shows the value that
    froze.

    ## Fix safety
    There is no automatic fix: which of these fits depends on how often the
    value changes, and either one changes the function's signature or state
    for every caller.
    """
    examples = (
        Invalid(
            """
            import tensorflow as tf

            use_absolute_error = False

            @tf.function
            def loss(y_true, y_pred):
                if use_absolute_error:
                    return tf.reduce_mean(tf.abs(y_true - y_pred))
                return tf.reduce_mean(tf.square(y_true - y_pred))

            def enable_absolute_error():
                global use_absolute_error
                use_absolute_error = True
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            scale = 1.0

            @tf.function
            def loss(y_true, y_pred):
                return scale * tf.reduce_mean(tf.square(y_true - y_pred))

            scale = 2.0
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            lr_scale = 1.0

            @tf.function
            def train_step(x):
                return x * lr_scale

            for epoch in range(10):
                lr_scale = 1.0 / (epoch + 1)
                train_step(tf.ones(3))
            """,
            note="a module global rebound in the module's epoch loop",
        ),
        Invalid(
            """
            import tensorflow as tf

            class ReplayBuffer:
                def __init__(self):
                    self.mem_cntr = 0

                def store(self, item):
                    self.mem_cntr += 1

            class Agent:
                def __init__(self):
                    self.memory = ReplayBuffer()

                @tf.function
                def learn(self, x):
                    if self.memory.mem_cntr < 64:
                        return x
                    return 2 * x
            """,
            note="a counter of an object the class holds",
        ),
        Invalid(
            """
            import tensorflow as tf

            CONFIG = {"margin": 1.0}

            @tf.function
            def loss(y_true, y_pred):
                return tf.reduce_mean(tf.maximum(CONFIG["margin"] - y_true * y_pred, 0.0))

            def anneal():
                CONFIG["margin"] = 0.5
            """
        ),
        Invalid(
            """
            import numpy as np
            import tensorflow as tf

            class Agent:
                def __init__(self, model):
                    self.model = model
                    self.is_weight = 1.0
                    self.model.compile(optimizer="adam", loss=self._weighted_loss)

                def _weighted_loss(self, y_true, y_pred):
                    return tf.reduce_mean(self.is_weight * tf.square(y_true - y_pred))

                def train_step(self, weights):
                    self.is_weight = np.asarray(weights)
            """
        ),
        Invalid(
            """
            import tensorflow as tf

            def main(dataset):
                scale = 1.0

                @tf.function
                def step(x):
                    return x * scale

                for epoch in range(3):
                    scale = scale * 0.5
                    for x in dataset:
                        step(x)
            """
        ),
        Valid(
            """
            import tensorflow as tf

            class Scaled(tf.keras.layers.Layer):
                def __init__(self, scale=2.0):
                    super().__init__()
                    self.scale = scale

                def build(self, input_shape):
                    self.kernel = self.add_weight(shape=(input_shape[-1],))

                def call(self, inputs):
                    return inputs * self.kernel * self.scale
            """,
            note="attributes set up once, in `__init__` and `build`",
        ),
        Valid(
            """
            import tensorflow as tf

            SCALE = 2.0

            @tf.function
            def loss(y_true, y_pred):
                return SCALE * tf.reduce_mean(tf.square(y_true - y_pred))
            """,
            note="a module constant bound once is not state",
        ),
        Valid(
            """
            import tensorflow as tf

            batch_size = 32
            print(batch_size)
            batch_size = 64

            @tf.function
            def step(x):
                return tf.random.normal((batch_size, 2)) + x
            """,
            note="rebound by the script before the function exists: every trace sees 64",
        ),
        Valid(
            """
            import tensorflow as tf

            def make_epoch(flags, builder):
                steps = flags.size // flags.batch_size
                steps = builder.num_examples // flags.batch_size

                @tf.function
                def train_epoch(iterator):
                    for _ in tf.range(tf.cast(steps, tf.int32)):
                        tf.print(next(iterator))

                return train_epoch
            """,
            note="rebound by the enclosing function before the step exists: it sees the last value",
        ),
        Valid(
            """
            import tensorflow as tf

            class NoisyDense(tf.keras.layers.Layer):
                def __init__(self, units):
                    super().__init__()
                    self.units = units
                    self.reset_noise()

                def reset_noise(self):
                    self.eps = tf.random.normal((self.units,))

                def call(self, inputs):
                    return inputs * self.eps
            """,
            note="attributes set by a method only `__init__` calls are set up once",
        ),
        Valid(
            """
            use_absolute_error = False

            def loss(y_true, y_pred):
                return abs(y_true - y_pred) if use_absolute_error else (y_true - y_pred) ** 2

            def enable():
                global use_absolute_error
                use_absolute_error = True
            """,
            note="not traced",
        ),
    )

    def check(self, ctx: RuleContext) -> Iterator[Violation]:
        state = FrozenState(ctx)
        for function in ctx.functions:
            if function.runs_traced is None:
                continue
            for read in state.reads(function):
                if read.called:
                    message = (
                        f"`{read.name}` is Python state ({read.how}) called in traced "
                        f"`{function.qualname}`: the graph keeps calling the object it held at "
                        "the first trace, and one set later is never run; trace again after "
                        "replacing it, or keep one object and update its variables"
                    )
                else:
                    message = (
                        f"`{read.name}` is Python state ({read.how}) read in traced "
                        f"`{function.qualname}`: its value is frozen at the first trace and "
                        "later changes are ignored; pass it as a tensor argument or keep it "
                        "in a `tf.Variable`"
                    )
                yield Violation(read.node, message)


RULES = (ModuleStateInTracedCode,)
