"""Findings and fixes checked against hand-labelled public code: the shapes
tfrewrite got wrong there, each written small."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip()


def _findings(source: str, code: str) -> list:
    return [f for f in check_source(_d(source), select=[code]) if f.code == code]


# -- TFR304: `training` given positionally -------------------------------------------

_NET = """
    import tensorflow as tf

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dropout(0.5)
            self.dense = tf.keras.layers.Dense(1)

        def call(self, x, training=False):
            return self.dense(self.d(x, training=training))

    opt = tf.keras.optimizers.Adam()

    @tf.function
    def step(x, generator):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(generator({args}))
        grads = tape.gradient(loss, generator.trainable_variables)
        opt.apply_gradients(zip(grads, generator.trainable_variables))
"""


def test_unknown_model_given_a_second_positional_argument_is_not_reported():
    assert _findings(_NET.format(args="x, True"), "TFR304") == []


def test_unknown_model_given_only_its_input_is_still_reported():
    [finding] = _findings(_NET.format(args="x"), "TFR304")
    assert finding.fix is not None


def test_known_class_decides_where_training_binds():
    source = """
        import tensorflow as tf

        class Net(tf.keras.Model):
            def call(self, x, mask=None, training=False):
                return tf.nn.dropout(x, 0.5) if training else x

        generator = Net()

        def step(x, m):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(generator(x, {arg}))
            grads = tape.gradient(loss, generator.trainable_variables)
            opt.apply_gradients(zip(grads, generator.trainable_variables))
    """
    # The second positional argument is `mask`: `training` is still missing.
    assert len(_findings(source.format(arg="m"), "TFR304")) == 1
    # The third is `training`.
    assert _findings(source.format(arg="m, True"), "TFR304") == []


def test_a_training_flag_after_star_args_binds_by_keyword_only():
    source = """
        import tensorflow as tf

        class Net(tf.keras.Model):
            def call(self, x, *args, training=False, **kwargs):
                return tf.nn.dropout(x, 0.5) if training else x

        generator = Net()

        def step(x, state):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(generator(x, state))
            grads = tape.gradient(loss, generator.trainable_variables)
            opt.apply_gradients(zip(grads, generator.trainable_variables))
    """
    # `state` goes to `*args`: no positional argument reaches `training`.
    [finding] = _findings(source, "TFR304")
    assert finding.fix is not None


def test_held_model_given_training_positionally_is_not_reported():
    source = """
        import tensorflow as tf

        class Gen(tf.keras.Model):
            def call(self, z, {params}):
                return tf.nn.dropout(z, 0.5) if training else z

        class Gan:
            def __init__(self):
                self.generator = Gen()

            def step(self, z):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(self.generator(z, True))
                grads = tape.gradient(loss, self.generator.trainable_variables)
                opt.apply_gradients(zip(grads, self.generator.trainable_variables))
    """
    assert _findings(source.format(params="training=False"), "TFR304") == []
    # A held model whose `call` takes a second input there: `training` is missing.
    [finding] = _findings(source.format(params="actions, training=False"), "TFR304")
    assert finding.fix is not None


# -- TFR302/TFR303: Keras host loops in a train step -----------------------------------

_REPLAY = """
    import tensorflow as tf

    def replay(states, rewards):
        target_q = rewards + 0.9 * target.{call}
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(actor(states, training=True) - target_q))
        grads = tape.gradient(loss, actor.trainable_variables)
        opt.apply_gradients(zip(grads, actor.trainable_variables))

    for _ in range(3):
        replay(states, rewards)
"""

_HOST_LOOPS = {
    "predict(states, verbose=0)": (
        "line 4 calls `target.predict`: Keras' predict runs its own loop and cannot run "
        "inside a tf.function; call the model instead (`target(states, training=False)`)"
    ),
    "evaluate(states, rewards, verbose=0)": (
        "line 4 calls `target.evaluate`: Keras' evaluate runs its own loop and cannot run "
        "inside a tf.function; call the model instead (`target(states, training=False)`)"
    ),
    "fit(states, rewards, verbose=0).history['loss'][-1]": (
        "line 4 calls `target.fit`: Keras' fit runs its own loop and cannot run inside a "
        "tf.function; train `target` with a tape and `apply_gradients` instead"
    ),
    "predict_on_batch(states)": "line 4 calls `target.predict_on_batch`: Keras' predict_on_batch",
}


def test_step_calling_a_keras_host_loop_stays_eager():
    for call, reason in _HOST_LOOPS.items():
        [step] = _findings(_REPLAY.format(call=call), "TFR302")
        assert step.fix is None, call
        assert reason in step.message, step.message


def test_step_calling_its_own_predict_method_is_decorated():
    source = """
        import tensorflow as tf

        class Agent(tf.keras.Model):
            def predict(self, states):
                return self(states, training=False)

            def replay(self, states, rewards):
                target_q = rewards + 0.9 * self.predict(states)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(self(states, training=True) - target_q))
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))

        agent = Agent()
        for _ in range(3):
            agent.replay(states, rewards)
    """
    [step] = _findings(source, "TFR302")
    assert "predict" not in step.message
    assert step.fix is not None


def test_python_class_predict_is_one_blocker_not_two():
    source = _REPLAY.format(call="predict(states)").replace(
        "    def replay(",
        "    class Table:\n        def predict(self, s):\n            return s\n\n    def replay(",
    )
    [step] = _findings(source, "TFR302")
    assert "a method of the Python class `Table`" in step.message, step.message
    assert "Keras' predict" not in step.message


def test_inline_loop_calling_a_keras_host_loop_is_not_extracted():
    for method in ("predict", "evaluate", "fit"):
        source = f"""
            import tensorflow as tf

            for states, rewards in batches:
                with tf.GradientTape() as tape:
                    target_q = rewards + 0.9 * target.{method}(states, verbose=0)
                    loss = tf.reduce_mean(tf.square(actor(states, training=True) - target_q))
                grads = tape.gradient(loss, actor.trainable_variables)
                opt.apply_gradients(zip(grads, actor.trainable_variables))
        """
        [loop] = _findings(source, "TFR303")
        assert loop.fix is None, method
        assert (
            f"no fix: line 5 calls `target.{method}`: Keras' {method} runs its own loop"
            in loop.message
        ), loop.message


# -- Keras under every import spelling -------------------------------------------------

_LAYER = """
    import tensorflow as tf
    {imports}

    class Decay({base}):
        def __init__(self):
            super().__init__()
            self.beta = 1.0

        def call(self, x):
            w = tf.Variable(tf.ones([3]))
            self.beta *= 0.99
            return x * w * self.beta
"""

_SPELLINGS = (
    ("", "tf.keras.layers.Layer"),
    ("from tensorflow.keras import layers", "layers.Layer"),
    ("from tensorflow.python.keras import layers", "layers.Layer"),
    ("import tensorflow.python.keras as K", "K.layers.Layer"),
    ("from tensorflow.python.keras.engine.base_layer import Layer", "Layer"),
    ("import tf_keras", "tf_keras.layers.Layer"),
    ("import keras", "keras.layers.Layer"),
    ("from keras import layers", "layers.Layer"),
)


def _layer_findings(imports: str, base: str) -> list[tuple[str, int]]:
    source = _d(_LAYER).format(imports=imports, base=base)
    return sorted((f.code, f.start.line) for f in check_source(source))


def test_a_layer_has_the_same_findings_under_every_keras_spelling():
    expected = _layer_findings(*_SPELLINGS[0])
    assert {code for code, _ in expected} >= {"TFR201", "TFR202", "TFR204"}
    for imports, base in _SPELLINGS[1:]:
        assert _layer_findings(imports, base) == expected, imports


def test_private_keras_path_resolves_to_the_public_one():
    from tfrewrite.facts.keras_names import canonical_name, keras_leaf, keras_path

    assert canonical_name("tensorflow.python.keras.layers.Dense") == "tensorflow.keras.layers.Dense"
    assert canonical_name("tensorflow.python.keras_utils.x") == "tensorflow.python.keras_utils.x"
    for package in ("keras", "tf_keras", "tensorflow.keras", "tensorflow.python.keras"):
        assert keras_path(f"{package}.layers.Dense") == "layers.Dense"
        assert keras_leaf(f"{package}.Model") == "Model"
    assert keras_path("tensorflow.nn.relu") is None


# -- TFR306: a running sum divided by the loop's index ---------------------------------

_ENUMERATED = """
    import tensorflow as tf

    def evaluate(ds, bs):
        total = 0.0
        for i, x in enumerate(ds.batch({batch})):
            total += step(x)
        return total / {divisor}
"""


def test_running_sum_divided_by_the_enumerate_index_is_reported():
    for divisor in ("(i + 1)", "(1 + i)", "i"):
        [finding] = _findings(_ENUMERATED.format(batch="bs", divisor=divisor), "TFR306")
        assert "`total` sums one value per batch" in finding.message
        assert finding.fix is None  # a running sum keeps no batch sizes to weight by


def test_enumerate_index_with_equal_batches_or_another_divisor_is_not_reported():
    dropped = _ENUMERATED.format(batch="bs, drop_remainder=True", divisor="(i + 1)")
    assert _findings(dropped, "TFR306") == []
    assert _findings(_ENUMERATED.format(batch="bs", divisor="(i + 2)"), "TFR306") == []
    started = _ENUMERATED.format(batch="bs", divisor="(i + 1)").replace(
        "enumerate(ds.batch(bs))", "enumerate(ds.batch(bs), start=1)"
    )
    assert _findings(started, "TFR306") == []


def test_counter_case_keeps_its_finding():
    source = (
        _ENUMERATED.format(batch="bs", divisor="n")
        .replace("total += step(x)", "total += step(x)\n            n += 1")
        .replace("total = 0.0", "total, n = 0.0, 0")
    )
    [finding] = _findings(source, "TFR306")
    assert finding.fix is None


# -- TFR302/TFR303: `reduce_retracing` and static batch dimensions in callees ----------

_CALLEE_SHAPES = """
    import tensorflow as tf

    def {callee}

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(augment(x), training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for x, y in dataset.batch(64):
        train_step(x, y)
"""

_CALLEES = {
    "noise": "augment(x):\n        return x + tf.random.uniform([x.shape[0], 1])",
    "reshape": "augment(x):\n        g = x * 2.0\n        return tf.reshape(g, [g.shape[0], -1])",
    "whole": "augment(x):\n        return x + tf.zeros(x.shape)",
}


def test_step_whose_callee_reads_the_batch_dimension_gets_no_reduce_retracing():
    for what, callee in _CALLEES.items():
        fixed = fix_source(_d(_CALLEE_SHAPES.format(callee=callee)), select=["TFR302"])
        assert "@tf.function\ndef train_step" in fixed, what


def test_step_whose_callee_reads_only_a_feature_dimension_keeps_reduce_retracing():
    callee = "augment(x):\n        return tf.reshape(x, [-1, x.shape[-1]])"
    fixed = fix_source(_d(_CALLEE_SHAPES.format(callee=callee)), select=["TFR302"])
    assert "@tf.function(reduce_retracing=True)\ndef train_step" in fixed


def test_extracted_step_whose_callee_reads_the_batch_dimension_gets_no_reduce_retracing():
    source = """
        import tensorflow as tf

        def augment(x):
            return x + tf.random.uniform([x.shape[0], 1])

        for x, y in dataset.batch(64):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(augment(x), training=True) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """
    fixed = fix_source(_d(source), select=["TFR303"], unsafe_fixes=True)
    assert "@tf.function\ndef train_step" in fixed
    assert "reduce_retracing" not in fixed


# -- Where code runs traced: module aliases and TFP bijector hooks ------------------

_FLOW = """
    import tensorflow as tf
    import tensorflow_probability as tfp

    tfb = tfp.bijectors
    tfk = tf.keras


    class Shift(tfb.Bijector):
        def __init__(self):
            super().__init__(forward_min_event_ndims=1)

        def _inverse(self, y):
            print("inverse", y)
            return y - 1.0

        def _inverse_log_det_jacobian(self, y):
            return tf.zeros([])


    class Scale(tfk.layers.Layer):
        def call(self, x):
            print("scale", x)
            return 2.0 * x
"""


def test_a_bijector_hook_and_a_layer_through_module_aliases_run_traced():
    """`tfb = tfp.bijectors; class Shift(tfb.Bijector)`: TFP calls `_inverse`
    from `log_prob` in the traced loss, as Keras calls `call` of
    `class Scale(tfk.layers.Layer)`; a module-level alias resolves like an
    import."""
    lines = sorted(f.start.line for f in _findings(_FLOW, "TFR103"))
    assert lines == [13, 22]


def test_a_name_bound_twice_at_module_level_is_no_alias():
    source = _FLOW.replace(
        "    tfb = tfp.bijectors\n", "    tfb = tfp.bijectors\n    tfb = object\n"
    )
    assert [f.start.line for f in _findings(source, "TFR103")] == [23]  # `Scale.call` only


_GET_VARIABLE = """
    import tensorflow as tf


    class Norm(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.made = False

        def make(self, n):
            self.beta = tf.compat.v1.get_variable("beta", [1, n])
            self.made = True

        def call(self, x):
            if not self.made:
                self.make(x.shape[-1])
            return x + self.beta
"""


def test_get_variable_in_traced_code_is_reported_even_behind_a_run_once_flag():
    [finding] = _findings(_GET_VARIABLE, "TFR204")
    assert finding.start.line == 10
    assert "variable store, shared by name" in finding.message


# -- TFR304: layers a step's forward-pass method calls without `training` -----------

FORWARD_PASS = """
    import keras
    import tensorflow as tf


    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(4)
            self.drop = keras.layers.Dropout(0.5)
            self.head = keras.layers.Dense(1)

        def forward(self, x, training):
            h = self.drop(self.dense(x))
            return self.head(h)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.forward(x, True) - y))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

        def call(self, x, training=False):
            return self.forward(x, training)
"""


def test_a_layer_a_step_reaches_through_its_own_method_without_training_is_reported():
    """`self.forward(x, True)` in `train_step`: no call context, so only
    what `forward` passes `training` to gets it. `Dense` ignores it."""
    [finding] = _findings(FORWARD_PASS, "TFR304")
    assert finding.start.line == 13
    assert "`self.drop(...)` gets no `training` in `forward`" in finding.message
    fixed = fix_source(_d(FORWARD_PASS), select=["TFR304"], unsafe_fixes=True)
    assert "h = self.drop(self.dense(x), training=training)" in fixed
    assert fix_source(fixed, select=["TFR304"], unsafe_fixes=True) == fixed


def test_a_method_the_step_gives_no_training_value_is_left_to_the_step():
    source = FORWARD_PASS.replace("self.forward(x, True)", "self.forward(x, None)")
    assert len(_findings(source, "TFR304")) == 1  # given a value, even None
    source = FORWARD_PASS.replace("def forward(self, x, training)", "def forward(self, x, flag)")
    assert _findings(source, "TFR304") == []  # no `training` parameter to pass on


# -- An object built in traced code: its `__init__` runs in the trace ------------------

PAIRS = """
    import tensorflow as tf


    class Pairs:
        def __init__(self, a, b):
            self.scores = self.correlate(a, b)

        def correlate(self, a, b):
            rows, width = a.shape
            return tf.reshape(tf.matmul(a, b, transpose_b=True), (rows, rows, 1))


    @tf.function
    def attend(a, b):
        return Pairs(a, b).scores
"""


def test_the_init_of_an_object_built_in_traced_code_runs_traced():
    """`Pairs(a, b)` in a traced function runs `Pairs.__init__` in its
    trace, and what `__init__` calls: the static batch dimension in
    `correlate` is reported."""
    [finding] = _findings(PAIRS, "TFR107")
    assert finding.start.line == 10
    assert "`rows` (`a.shape[0]`)" in finding.message


# -- A method a base class hands to Keras' recurrent loop: the subclass's runs ---------

RECURRENT = """
    import tensorflow as tf
    from tensorflow.keras import backend as K


    class Recurrent(tf.keras.layers.Layer):
        def call(self, inputs):
            states = [tf.zeros_like(inputs[:, 0])]
            last, outputs, states = K.rnn(self.step, inputs, states)
            return outputs

        def step(self, x, states):
            return x, states


    class Predictor(Recurrent):
        def step(self, x, states):
            error = tf.reduce_mean(x - states[0])
            print("error", error)
            return x, [x]
"""


def test_the_override_of_a_step_a_base_class_hands_to_backend_rnn_runs_traced():
    """`K.rnn(self.step, ...)` in `Recurrent.call` runs `Predictor.step`
    for a `Predictor`: its print of a tensor runs once, at trace time."""
    [finding] = _findings(RECURRENT, "TFR103")
    assert finding.start.line == 18


# Layers kept in lists: by index, and by a loop over one or two lists.
LISTED_LAYERS = FORWARD_PASS.replace(
    """            self.drop = keras.layers.Dropout(0.5)
""",
    """            self.drop = keras.layers.Dropout(0.5)
            self.blocks = []
            self.norms = [keras.layers.BatchNormalization()]
            for _ in range(2):
                self.blocks.append(keras.layers.Dropout(0.5))
""",
).replace(
    """            h = self.drop(self.dense(x))
""",
    """            h = self.drop(self.dense(x), training=False)
            h = self.norms[0](h)
            for block, norm in zip(self.blocks, self.norms):
                h = norm(block(h))
""",
)


def test_layers_kept_in_lists_are_followed_to_what_the_class_appends():
    passed = "h = self.drop(self.dense(x), training=training)"
    assert _findings(FORWARD_PASS.replace("h = self.drop(self.dense(x))", passed), "TFR304") == []
    listed = _findings(LISTED_LAYERS, "TFR304")
    assert [f.start.line for f in listed] == [18, 20, 20]
    assert "`self.norms[0](...)` gets no `training` in `forward`" in listed[0].message
